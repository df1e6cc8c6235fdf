// npx tsx scripts/bench/orders-rss.ts [--store sqlite|postgres] [--connections 512] [--seconds 6] [--endpoint]
// The server's memory under closed-loop POST /v2/orders, measured as issue 70 did: the peak of
// its resident memory (sampled every 50 ms from /proc) above its value once it is ready, on a
// fresh server with no warm-up, so what the first load costs (code compiled, heap grown) is
// counted. `--endpoint`: with an active webhook endpoint on a loopback receiver, so the
// delivery engine and the sending thread work meanwhile. Also: timeouts, and the server's CPU
// per answered order (comparable across runs where the throughput is not, on a loaded machine).
import { readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createManagementClient } from '../../client/api.ts';
import { createTestDatabase } from '../../server/store/postgres/testing.ts';
import { BUNDLE_DIR_VARIABLE, buildChildBundles } from '../../server/testing/server-bundle.ts';
import { createTenantViaAdmin } from './admin.ts';
import { checkSettings, positiveIntSetting } from '../lib/settings.ts';
import { ROOT } from '../lib/specs.ts';
import { startServer } from './lib.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    connections: { type: 'string', default: '512' },
    seconds: { type: 'string', default: '6' },
    endpoint: { type: 'boolean', default: false },
  },
});
const connections = checkSettings('orders-rss', () => positiveIntSetting('--connections', values.connections));
const seconds = checkSettings('orders-rss', () => positiveIntSetting('--seconds', values.seconds));
if (values.store !== 'sqlite' && values.store !== 'postgres') {
  process.stderr.write(`orders-rss: --store must be sqlite or postgres, not ${values.store}\n`);
  process.exit(2);
}

/** VmRSS of a process in MB. */
const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
/** User and system CPU of a process in ms (clock ticks of 10 ms). */
const cpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

// The server as the tests and `npm start` run it: the esbuild bundle (inside the tree, where its packages resolve).
await mkdir(path.join(ROOT, 'node_modules', '.cache'), { recursive: true });
const bundles = await mkdtemp(path.join(ROOT, 'node_modules', '.cache', 'bench-rss-bundles-'));
process.on('exit', () => rmSync(bundles, { recursive: true, force: true }));
await buildChildBundles(bundles);
process.env[BUNDLE_DIR_VARIABLE] = bundles;
const db = values.store === 'postgres' ? await createTestDatabase() : null;
let received = 0;
const receiver = createServer((req, res) => req.resume().on('end', () => void ((received += 1), res.writeHead(204).end())));
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
// A loopback endpoint needs insecure URLs allowed, which NODE_ENV=production refuses.
const env: NodeJS.ProcessEnv = {
  RATE_LIMIT_RPS: '0',
  VALIDATE_RESPONSES: 'false',
  CHECK_NESTED_TRANSACTIONS: 'false',
  ...(values.endpoint ? { NODE_ENV: 'test', WEBHOOK_ALLOW_INSECURE_URLS: 'true' } : {}),
  ...(db ? { DATABASE_URL: db.url, SECRETS_KEY: Buffer.alloc(32, 7).toString('base64url') } : {}),
};
const server = await startServer({ env, readyTimeoutMs: 120_000 });
try {
  const tenant = server.tenant ?? (await createTenantViaAdmin({ ...process.env, ...env, DATA_DIR: server.dataDir }));
  if (values.endpoint) {
    const management = createManagementClient({ baseUrl: server.url, memberToken: tenant.memberToken });
    const created = await management.POST('/v2/webhooks/endpoints', { body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` } });
    if (created.response.status !== 201) throw new Error(`endpoint: ${created.response.status}`);
  }
  const pid = server.child.pid!;
  const ready = rssMb(pid);
  const cpuBefore = cpuMs(pid);
  let peak = ready;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
  let seq = 0;
  const headers = { 'content-type': 'application/json', 'x-api-key': tenant.apiKey, 'x-api-hash': tenant.apiHash };
  const result = await autocannon({
    url: server.url,
    connections,
    duration: seconds,
    requests: [{ method: 'POST', path: '/v2/orders', headers, setupRequest: (req) => ({ ...req, body: JSON.stringify({ merchantReference: `rss-${seq++}`, amountMinor: 1999 }) }) }],
  });
  clearInterval(sampler);
  const cpu = cpuMs(pid) - cpuBefore;
  console.log(
    `${values.store}, ${connections} connections, ${seconds} s${values.endpoint ? ', one endpoint' : ''}: RSS ${Math.round(ready)} MB when ready, peak ${Math.round(peak)} MB (+${Math.round(peak - ready)} MB); ` +
      `${result['2xx']} orders (${Math.round(result['2xx'] / seconds)}/s), ${result.timeouts} timeouts, ${result.non2xx} non-2xx, ${received} webhooks; ` +
      `${Math.round((cpu * 1000) / Math.max(1, result['2xx']))} µs of server CPU an order`,
  );
} finally {
  await server.stop();
  receiver.close();
  await db?.drop();
}
