// npm run bench:api: POST /transactions/payout and GET /transactions/users on the real server
// (SQLite store, production settings, rate limiter off), beside a bare node:http JSON echo
// measured in the same run, with autocannon. Prints requests per second and p50/p99.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { freePort, machine, startServer, summarise, table, type Summary } from './lib.ts';
import { checkSettings, positiveIntSetting } from '../lib/settings.ts';

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '32' } },
});
const duration = checkSettings('bench:api', () => positiveIntSetting('--duration', values.duration));
const connections = checkSettings('bench:api', () => positiveIntSetting('--connections', values.connections));

const ECHO = `
const http = require('node:http');
http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
    const out = JSON.stringify({ transactionId: 'txn_echo', thirdPartyId: body.thirdPartyId ?? null });
    res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
    res.end(out);
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

async function startEcho(): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', ECHO], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

function run(name: string, opts: autocannon.Options): Promise<Summary> {
  return new Promise((resolve, reject) => {
    autocannon({ duration, connections, ...opts }, (err, result) => (err ? reject(err) : resolve(summarise(name, result))));
  });
}

const server = await startServer({ env: { RATE_LIMIT_RPS: '0', VALIDATE_RESPONSES: 'false' } });
if (!server.tenant) throw new Error('the server printed no demo tenant');
const tenant = server.tenant;
const echo = await startEcho();
const headers = { 'content-type': 'application/json', 'x-api-key': tenant.apiKey, 'x-api-hash': tenant.apiHash };
let seq = 0;
const payoutRequest = (base: string): autocannon.Options => ({
  url: base,
  requests: [
    {
      method: 'POST',
      path: '/transactions/payout',
      headers,
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ thirdPartyId: `bench-${process.pid}-${seq++}`, userId: `user-${seq % 1000}`, amount: 0.01 }) }),
    },
  ],
});
const listRequest = (base: string): autocannon.Options => ({ url: `${base}/transactions/users?userId=user-7&limit=20`, headers });

try {
  // Warm up both, then measure.
  await run('warmup', { ...payoutRequest(server.url), duration: 2 });
  const rows = [
    await run('server POST /transactions/payout', payoutRequest(server.url)),
    await run('echo   POST (bare node:http)', payoutRequest(echo.url)),
    await run('server GET /transactions/users', listRequest(server.url)),
    await run('echo   GET (bare node:http)', listRequest(echo.url)),
  ];
  console.log(`\nbench:api on ${machine()}; ${connections} connections, ${duration} s each\n`);
  console.log(table(rows));
  const [payout, echoPost, list, echoGet] = rows as [Summary, Summary, Summary, Summary];
  console.log(`\nserver/echo throughput: payout ${(payout.rps / echoPost.rps).toFixed(2)}, list ${(list.rps / echoGet.rps).toFixed(2)}`);
} finally {
  echo.stop();
  await server.stop();
}
