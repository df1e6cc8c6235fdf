// npm run bench:listen [-- --store sqlite|postgres --events 200 --rate 20 --warmup 20]
//
// Event committed → forwarded by `payments-webhooks listen`: the real server (a child process)
// streams GET /v2/events/stream to the command (its own process, through tsx), which forwards
// each event, signed, to a loopback receiver in this process. Orders are created through
// POST /v2/orders at a steady --rate; for each event, the time from its `createdAt` (stamped in
// the writing transaction, just before the commit: so the figure slightly overstates
// commit → forward) to its receipt, p50/p95/p99/max.
//
// - same instance: the order API and the stream on one server (woken by the commit itself).
// - other instance (postgres): orders written on one instance, streamed by another over the
//   same database (found by the stream's poll, every 100 ms at most).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createOrdersClient } from '../../client/api.ts';
import { checkSettings, positiveIntSetting } from '../lib/settings.ts';
import { machine, startServer, type DemoTenant, type RunningServer } from './lib.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    events: { type: 'string', default: '200' },
    rate: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '20' },
  },
});
if (values.store !== 'sqlite' && values.store !== 'postgres') {
  process.stderr.write(`bench:listen: --store must be sqlite or postgres, not ${values.store}\n`);
  process.exit(2);
}
const N = checkSettings('bench:listen', () => positiveIntSetting('--events', values.events));
const RATE = checkSettings('bench:listen', () => positiveIntSetting('--rate', values.rate));
const WARMUP = checkSettings('bench:listen', () => positiveIntSetting('--warmup', values.warmup));
const BASE_ENV = { RATE_LIMIT_RPS: '0', VALIDATE_RESPONSES: 'false', LOG_LEVEL: 'warn' };

const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The receiver: the arrival time of each event id. */
async function receiver(): Promise<{ url: string; arrivals: Map<string, number>; close(): void }> {
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const at = performance.timeOrigin + performance.now();
    arrivals.set(String(req.headers['service-event-id']), at);
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, arrivals, close: () => server.close() };
}

/** `payments-webhooks listen` as a process; resolves once it is ready. */
async function listen(baseUrl: string, tenant: DemoTenant, forwardTo: string, stateDir: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'client', 'cli', 'bin.ts'), 'listen', '--forward-to', forwardTo, '--base-url', baseUrl, '--state', path.join(stateDir, 'state.json')],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PAYMENTS_API_KEY: tenant.apiKey, PAYMENTS_API_SECRET: tenant.apiHash } },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('signing secret is')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`listen exited ${code}`)));
  });
  return child;
}

interface Result {
  name: string;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  lost: number;
}

/** --warmup then --events orders at --rate on `writer`, listened to on `reader`. */
async function measure(name: string, writer: RunningServer, reader: RunningServer, tenant: DemoTenant): Promise<Result> {
  const rx = await receiver();
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'bench-listen-'));
  const cli = await listen(reader.url, tenant, rx.url, stateDir);
  const orders = createOrdersClient({ baseUrl: writer.url, apiKey: tenant.apiKey, apiHash: tenant.apiHash });
  const created = new Map<string, number>();
  try {
    const gap = 1000 / RATE;
    const start = performance.now();
    for (let i = 0; i < WARMUP + N; i++) {
      const wait = start + i * gap - performance.now();
      if (wait > 0) await sleep(wait);
      const r = await orders.POST('/v2/orders', { body: { merchantReference: `bench-${i}`, amountMinor: 100 } });
      if (!r.data) throw new Error(`order refused: ${r.response.status}`);
      if (i >= WARMUP) created.set(r.data.orderId, Date.parse(r.data.createdAt));
    }
    // The events of the measured orders, by id, from the feed.
    const ids = new Map<string, number>();
    for (let cursor: string | undefined, more = true; more; ) {
      const page = await orders.GET('/v2/events', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } });
      for (const e of page.data!.data) if ('orderId' in e.data && created.has(e.data.orderId)) ids.set(e.id, Date.parse(e.createdAt));
      cursor = page.data!.nextCursor ?? undefined;
      more = cursor !== undefined;
    }
    const deadline = Date.now() + 10_000;
    while ([...ids.keys()].some((id) => !rx.arrivals.has(id)) && Date.now() < deadline) await sleep(50);
    const latencies = [...ids].filter(([id]) => rx.arrivals.has(id)).map(([id, at]) => rx.arrivals.get(id)! - at);
    const ms = (p: number): number => Math.round(percentile(latencies, p));
    return { name, p50: ms(50), p95: ms(95), p99: ms(99), max: Math.round(Math.max(...latencies)), lost: ids.size - latencies.length };
  } finally {
    cli.kill('SIGINT');
    rx.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

const results: Result[] = [];
if (values.store === 'sqlite') {
  const server = await startServer({ env: BASE_ENV });
  try {
    results.push(await measure('same instance (sqlite)', server, server, server.tenant!));
  } finally {
    await server.stop();
  }
} else {
  const { createTestDatabase } = await import('../../server/store/postgres/testing.ts');
  const db = await createTestDatabase();
  const { randomBytes } = await import('node:crypto');
  const env = { ...BASE_ENV, DATABASE_URL: db.url, SECRETS_KEY: randomBytes(32).toString('base64url') };
  const a = await startServer({ env });
  const b = await startServer({ env });
  try {
    // PostgreSQL instances print no demo tenant: one is made through the same store.
    const { pino } = await import('pino');
    const { loadConfig } = await import('../../server/config.ts');
    const { openServices } = await import('../../server/services.ts');
    const { createTenant } = await import('../../server/domain/admin.ts');
    const { services } = await openServices(loadConfig({ ...env, DATA_DIR: a.dataDir }), pino({ level: 'silent' }));
    const tenant = await createTenant(services, { name: 'Bench Merchant' });
    await services.store.close();
    results.push(await measure('same instance (postgres)', a, a, tenant));
    results.push(await measure('other instance (postgres)', a, b, tenant));
  } finally {
    await b.stop();
    await a.stop();
    await db.drop();
  }
}

console.log(`\nbench:listen on ${machine()}: ${N} events at ${RATE}/s after ${WARMUP} warm-up, event createdAt → forwarded to the receiver\n`);
console.log('| path | p50 ms | p95 ms | p99 ms | max ms | lost |\n|---|---:|---:|---:|---:|---:|');
for (const r of results) console.log(`| ${r.name} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.max} | ${r.lost} |`);
