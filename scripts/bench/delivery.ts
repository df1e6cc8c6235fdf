// npm run bench:delivery [-- --store sqlite|postgres --events N --only a,b --profile DIR]
//
// The delivery engine of the real server (a child process, LOG_LEVEL=warn,
// VALIDATE_RESPONSES=false, CHECK_NESTED_TRANSACTIONS=false, RATE_LIMIT_RPS=0) against a
// loopback receiver in this process, each figure beside its floor measured in the same run:
//
// - floor: HMAC-sign + undici POST straight to the same receiver, warmed up, N requests at 4
//   and at 64 in flight; the better of the two is "the floor".
// - drain1: --drain-warmup (default 5 000) + N deliveries queued to one endpoint while no server
//   runs (seeded through the Store itself), then the server starts and drains them; deliveries/s
//   over the last N, once the warm-up deliveries are in (a warmed-up server, as the floor is),
//   and beside it the whole backlog from the first receipt (a cold start).
// - drain32: the same across 32 endpoints of 32 tenants.
// - latency: orders through POST /v2/orders at a steady --rate (default 1000/s) for --seconds
//   after --warmup-orders orders at the same rate (default 15 000, reported apart); event
//   createdAt → receipt, p50/p95/p99. The warm-up is counted in orders, not seconds: V8
//   optimises the order and delivery paths (TurboFan, on the helper threads of both processes)
//   once, around the 10 500th order whatever the rate, and that second's latency (p99 40–140 ms
//   on SQLite) is the fresh server's, not the steady state's.
// - scale (postgres): drain32 with two instances ÷ one.
// - claim: claim cost (in this process, on the store directly) with 1 000 and 100 000 pending
//   deliveries; rss: the server's RSS while it drains 100 000 versus 10 000 (backlog: both).
import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { signatureHeader } from '../../signing/signature.ts';
import { createManagementClient } from '../../client/api.ts';
import { newDeliveryId, newEndpointId, newEnvironmentId, newEventId, newTenantId } from '../../server/domain/ids.ts';
import { createSecretBox } from '../../server/domain/secrets.ts';
import { HEALTHY, type DeliveryRecord, type EndpointRecord, type EnvironmentRecord, type EventRecord } from '../../server/domain/model.ts';
import type { Store } from '../../server/domain/store.ts';
import { cpuShare, cpuSnapshot, describeShare, type CpuShare, type CpuSnapshot } from './cpu.ts';
import { machine, startServer, type RunningServer } from './lib.ts';
import { checkSettings, nonNegativeIntSetting, positiveIntSetting } from '../lib/settings.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    events: { type: 'string', default: '10000' },
    only: { type: 'string', default: 'floor,drain1,drain32,latency,scale,claim,rss' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    'warmup-orders': { type: 'string', default: '15000' },
    'drain-warmup': { type: 'string', default: '5000' },
    backlog: { type: 'string', default: '100000' },
    profile: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log('npm run bench:delivery -- [--store sqlite|postgres] [--events 10000] [--only floor,drain1,drain32,latency,scale,claim,rss] [--rate 1000] [--seconds 10] [--warmup-orders 15000] [--drain-warmup 5000] [--backlog 100000] [--profile DIR]');
  process.exit(0);
}
if (values.store !== 'sqlite' && values.store !== 'postgres') {
  process.stderr.write(`bench:delivery: --store must be sqlite or postgres, not ${values.store}\n`);
  process.exit(2);
}
const STORE = values.store;
const N = checkSettings('bench:delivery', () => positiveIntSetting('--events', values.events));
const RATE = checkSettings('bench:delivery', () => positiveIntSetting('--rate', values.rate));
const SECONDS = checkSettings('bench:delivery', () => positiveIntSetting('--seconds', values.seconds));
const DRAIN_WARMUP = checkSettings('bench:delivery', () => nonNegativeIntSetting('--drain-warmup', values['drain-warmup']));
const WARMUP_ORDERS = checkSettings('bench:delivery', () => nonNegativeIntSetting('--warmup-orders', values['warmup-orders']));
const BACKLOG = checkSettings('bench:delivery', () => positiveIntSetting('--backlog', values.backlog));
const ONLY = new Set(values.only.split(','));
const KEY = Buffer.alloc(32, 7);
const box = createSecretBox(KEY);
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64url')}`;

const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- the receiver ---------------------------------------------------------------------------

interface Window {
  expected: number;
  seen: Set<string>;
  first: number;
  last: number;
  /** Receipts that warm the server up before the measured window: `warm` is when the next one came. */
  warmup?: number;
  warm?: number;
  latencies: number[] | null;
  duplicates: number;
  /** Processes whose CPU is read at the start and the end of the measured window. */
  pids?: number[];
  cpuFrom?: CpuSnapshot | null;
  cpuTo?: CpuSnapshot | null;
}
let window: Window | null = null;
const receiver: { url: string; server: Server } = await new Promise((resolve) => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const w = window;
      if (w) {
        const id = String(req.headers['service-event-id'] ?? '');
        const now = performance.timeOrigin + performance.now();
        if (w.seen.has(id)) w.duplicates++;
        else {
          w.seen.add(id);
          if (w.first === 0) w.first = now;
          if (w.warmup !== undefined && w.seen.size === w.warmup + 1) w.warm = now;
          w.last = now;
          if (w.pids && w.seen.size === (w.warmup ?? 0) + 1) w.cpuFrom = cpuSnapshot(w.pids);
          if (w.pids && w.seen.size === w.expected) w.cpuTo = cpuSnapshot(w.pids);
          if (w.latencies) w.latencies.push(now - Date.parse((JSON.parse(Buffer.concat(chunks).toString()) as { createdAt: string }).createdAt));
        }
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, server }));
});

async function waitFor(w: Window, timeoutMs = 600_000): Promise<void> {
  const t0 = Date.now();
  while (w.seen.size < w.expected) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`only ${w.seen.size} of ${w.expected} received`);
    await sleep(20);
  }
}

// ---- floor ------------------------------------------------------------------------------------

async function floor(n: number, inFlight: number): Promise<number> {
  const agent = new Agent({ connections: inFlight, keepAliveTimeout: 60_000 });
  const payload = JSON.stringify({ id: 'x'.repeat(64), type: 'order.created', apiVersion: 'v2', createdAt: new Date().toISOString(), data: { orderId: 'c0ffee00-1234-4abc-8def-0123456789ab', merchantReference: 'INV-1', amountMinor: 100, currency: 'USD', status: 'open' } });
  const run = async (count: number): Promise<number> => {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next++ < count) {
          const t = Math.floor(Date.now() / 1000);
          const r = await request(receiver.url, {
            method: 'POST',
            dispatcher: agent,
            body: Buffer.from(payload, 'utf8'),
            headers: { 'Content-Type': 'application/json', 'Service-Event-Id': 'floor', 'Service-Signature': signatureHeader(SECRET, t, payload), 'User-Agent': 'bench' },
          });
          await r.body.text();
        }
      }),
    );
    return count / ((performance.now() - t0) / 1000);
  };
  await run(Math.min(2000, n)); // warm-up
  const rps = await run(n);
  await agent.close();
  return Math.round(rps);
}

// ---- seeding through the Store ------------------------------------------------------------------

interface Db {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  open(): Promise<Store>;
  drop(): Promise<void>;
}

async function freshDb(): Promise<Db> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-delivery-'));
  const base = { WEBHOOK_ALLOW_INSECURE_URLS: 'true', RATE_LIMIT_RPS: '0', VALIDATE_RESPONSES: 'false', CHECK_NESTED_TRANSACTIONS: 'false', LOG_LEVEL: 'warn', NODE_ENV: 'test', SECRETS_KEY: KEY.toString('base64url') };
  if (STORE === 'postgres') {
    const { createTestDatabase } = await import('../../server/store/postgres/testing.ts');
    const { openPostgresStore } = await import('../../server/store/postgres/store.ts');
    const db = await createTestDatabase();
    return { env: { ...base, DATABASE_URL: db.url }, dataDir, open: async () => { const s = await openPostgresStore({ connectionString: db.url }); await s.migrate(); return s; }, drop: async () => { await db.drop(); await rm(dataDir, { recursive: true, force: true }); } };
  }
  const { openSqliteStore } = await import('../../server/store/sqlite/store.ts');
  return { env: base, dataDir, open: async () => { const s = await openSqliteStore({ file: path.join(dataDir, 'payments.db') }); await s.migrate(); return s; }, drop: () => rm(dataDir, { recursive: true, force: true }) };
}

async function seedEndpoints(store: Store, count: number): Promise<EndpointRecord[]> {
  const now = Date.now();
  const eps: EndpointRecord[] = [];
  await store.transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      const tenant = { id: newTenantId(), name: `Bench ${i}`, createdAt: now };
      const env: EnvironmentRecord = { id: newEnvironmentId(), tenantId: tenant.id, name: 'test', walletBalance: '0', callbackSecretEnc: box.seal(SECRET), createdAt: now };
      const ep: EndpointRecord = { id: newEndpointId(), environmentId: env.id, url: `${receiver.url}/${i}`, secretEnc: box.seal(SECRET), signatureScheme: 'service-signature', eventTypes: null, maxPerSecond: null, active: true, version: 1, lastTestDeliveryId: null, createdAt: now, updatedAt: now, disabledAt: null, ...HEALTHY };
      await tx.tenants.insertTenant(tenant);
      await tx.tenants.insertEnvironment(env);
      await tx.endpoints.insert(ep);
      eps.push(ep);
    }
  });
  return eps;
}

/** Queues n pending deliveries round-robin over the endpoints; returns their event ids. */
async function seedDeliveries(store: Store, eps: EndpointRecord[], n: number): Promise<void> {
  const CHUNK = 2000;
  for (let from = 0; from < n; from += CHUNK) {
    const now = Date.now();
    await store.transaction(async (tx) => {
      for (let i = from; i < Math.min(n, from + CHUNK); i++) {
        const ep = eps[i % eps.length]!;
        const id = newEventId();
        const payload = JSON.stringify({ id, type: 'order.created', apiVersion: 'v2', createdAt: new Date(now).toISOString(), data: { orderId: 'c0ffee00-1234-4abc-8def-0123456789ab', merchantReference: `INV-${i}`, amountMinor: 100, currency: 'USD', status: 'open' } });
        const event: EventRecord = { id, environmentId: ep.environmentId, type: 'order.created', payload, orderId: null, merchantReference: `INV-${i}`, transactionId: null, createdAt: now };
        const d: DeliveryRecord = {
          id: newDeliveryId(now), environmentId: ep.environmentId, eventId: id, kind: 'order_event', endpointId: ep.id, endpointVersion: 1, url: ep.url,
          state: 'pending', attemptCount: 0, cycle: 1, nextAttemptAt: now, leaseOwner: null, leaseExpiresAt: null, orderId: null,
          merchantReference: `INV-${i}`, transactionId: null, createdAt: now, updatedAt: now, deliveredAt: null,
        };
        await tx.events.insert(event);
        await tx.deliveries.insert(d);
      }
    });
  }
}

async function rss(server: RunningServer): Promise<number> {
  const status = await readFile(`/proc/${server.child.pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Warnings and errors the servers logged (LOG_LEVEL=warn), first few kept to show. */
const serverLog = { lines: 0, first: [] as string[] };
function watchLogs(server: RunningServer): RunningServer {
  let rest = '';
  server.child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!/"level":(40|50|60)/.test(line)) continue;
      serverLog.lines++;
      if (serverLog.first.length < 5) serverLog.first.push(line.slice(0, 300));
    }
  });
  return server;
}

let profileCount = 0;
function serverOpts(db: Db, dataDir?: string): { env: NodeJS.ProcessEnv; dataDir?: string; nodeArgs?: string[] } {
  return {
    env: db.env,
    ...(dataDir ? { dataDir } : {}),
    ...(values.profile ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${values.profile}/${STORE}-${++profileCount}`] } : {}),
  };
}

/**
 * Queues warmup + n deliveries over `endpoints` with no server running, then starts `instances`
 * servers and times the drain: `rps` over the last n, once the servers have sent `warmup` (so
 * the figure is a warmed-up server's, as the floor's is), and `coldRps` over the whole backlog
 * from the first receipt.
 */
async function drain(n: number, endpoints: number, instances: number, warmup = DRAIN_WARMUP): Promise<{ rps: number; coldRps: number; maxRssMb: number; duplicates: number; cpu: CpuShare | null }> {
  const db = await freshDb();
  const servers: RunningServer[] = [];
  try {
    const store = await db.open();
    const eps = await seedEndpoints(store, endpoints);
    await seedDeliveries(store, eps, warmup + n);
    await store.close();
    const w: Window = { expected: warmup + n, seen: new Set(), first: 0, last: 0, warmup, latencies: null, duplicates: 0 };
    window = w;
    // Started together: one after the other, the first drained most of the backlog alone while
    // the next was still starting, and two ÷ one measured mostly one instance.
    const started = await Promise.allSettled(Array.from({ length: instances }, () => startServer(serverOpts(db, db.dataDir))));
    for (const r of started) if (r.status === 'fulfilled') servers.push(watchLogs(r.value));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    w.pids = servers.map((s) => s.child.pid ?? 0);
    let maxRssMb = 0;
    const sampler = setInterval(() => void Promise.all(servers.map(rss)).then((r) => (maxRssMb = Math.max(maxRssMb, ...r))), 250);
    await waitFor(w);
    clearInterval(sampler);
    window = null;
    const from = warmup > 0 ? w.warm! : w.first;
    return {
      rps: Math.round((n - 1) / ((w.last - from) / 1000)),
      coldRps: Math.round((warmup + n - 1) / ((w.last - w.first) / 1000)),
      maxRssMb: Math.round(maxRssMb),
      duplicates: w.duplicates,
      cpu: cpuShare(w.cpuFrom, w.cpuTo),
    };
  } finally {
    window = null;
    await Promise.all(servers.map((s) => s.stop()));
    await db.drop();
  }
}

interface LatencyResult {
  p50: number;
  p95: number;
  p99: number;
  achieved: number;
  sent: number;
  /** How long POST /v2/orders took to answer (the order durable), of the same orders. */
  answer: { p50: number; p99: number };
  /** The same percentiles over the warm-up (a freshly started server compiling its hot paths). */
  warmup: { p50: number; p99: number; sent: number } | null;
}

/**
 * Orders through the API at a steady rate; event createdAt → receipt. The first `warmupOrders`
 * go at the same rate but are reported apart: the figure is the steady state, as the floor's
 * is (a server just started compiles its hot paths, the last of them around its 10 500th order).
 */
async function latency(rate: number, seconds: number, warmupOrders: number): Promise<LatencyResult> {
  const db = await freshDb();
  let server: RunningServer | null = null;
  const agent = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
  try {
    server = await startServer(serverOpts(db, db.dataDir));
    watchLogs(server);
    let tenant = server.tenant;
    if (!tenant) {
      const { createTenantViaAdmin } = await import('./admin.ts');
      tenant = await createTenantViaAdmin({ ...db.env, DATA_DIR: db.dataDir });
    }
    const management = createManagementClient({ baseUrl: server.url, memberToken: tenant.memberToken });
    const ep = await management.POST('/v2/webhooks/endpoints', { body: { url: receiver.url } });
    if (ep.response.status !== 201) throw new Error(`endpoint: ${ep.response.status}`);
    const { url } = server;
    const { apiKey, apiHash } = tenant;
    let seq = 0;
    /** `total` orders paced at the rate; resolves once each one's event has been received. */
    const phase = async (total: number): Promise<{ latencies: number[]; answers: number[]; sent: number; seconds: number }> => {
      const w: Window = { expected: total, seen: new Set(), first: 0, last: 0, latencies: [], duplicates: 0 };
      window = w;
      const t0 = performance.now();
      const pending: Promise<void>[] = [];
      const answers: number[] = [];
      let failures = 0;
      // Paced: order i leaves at t0 + i/rate, but never more than 64 unanswered at once (past
      // that the API is the bottleneck, and the latency would measure its queue, not delivery).
      let outstanding = 0;
      for (let i = 0; i < total; i++) {
        const due = t0 + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        while (outstanding >= 64) await sleep(1);
        outstanding++;
        const sentAt = performance.now();
        pending.push(
          request(`${url}/v2/orders`, {
            method: 'POST',
            dispatcher: agent,
            headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'x-api-hash': apiHash },
            body: JSON.stringify({ merchantReference: `lat-${seq++}`, amountMinor: 100 }),
          }).then(async (r) => {
            await r.body.dump();
            answers.push(performance.now() - sentAt);
            outstanding--;
            if (r.statusCode !== 201) failures++;
          }),
        );
      }
      await Promise.all(pending);
      const produced = (performance.now() - t0) / 1000;
      if (failures > 0) throw new Error(`${failures} orders failed`);
      await waitFor(w, 120_000);
      window = null;
      return { latencies: w.latencies!, answers, sent: total, seconds: produced };
    };
    const warm = warmupOrders > 0 ? await phase(warmupOrders) : null;
    const r = await phase(rate * seconds);
    const ms = (xs: number[], p: number): number => Math.round(percentile(xs, p));
    return {
      p50: ms(r.latencies, 50),
      p95: ms(r.latencies, 95),
      p99: ms(r.latencies, 99),
      achieved: Math.round(r.sent / r.seconds),
      answer: { p50: ms(r.answers, 50), p99: ms(r.answers, 99) },
      sent: r.sent,
      warmup: warm && { p50: ms(warm.latencies, 50), p99: ms(warm.latencies, 99), sent: warm.sent },
    };
  } finally {
    window = null;
    await agent.close();
    await server?.stop();
    await db.drop();
  }
}

/** Median claim time (limit 100, per-destination 4) on the store directly, with `pending` due deliveries over 32 endpoints. */
async function claimCost(pending: number): Promise<number> {
  const db = await freshDb();
  try {
    const store = await db.open();
    const eps = await seedEndpoints(store, 32);
    await seedDeliveries(store, eps, pending);
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      const got = await store.queue.claim({ owner: 'bench', now: Date.now(), leaseMs: 30_000, limit: 100, perEndpointLimit: 4 });
      times.push(performance.now() - t);
      await store.queue.release('bench', got.map((c) => c.delivery.id));
    }
    await store.close();
    return Number(percentile(times.slice(5), 50).toFixed(2));
  } finally {
    await db.drop();
  }
}

// ---- the run ------------------------------------------------------------------------------------

const out: string[] = [];
const log = (line: string): void => {
  out.push(line);
  console.error(line);
};
try {
  let best = 0;
  if (ONLY.has('floor') || ONLY.has('drain1') || ONLY.has('drain32') || ONLY.has('scale')) {
    const f4 = await floor(N, 4);
    const f64 = await floor(N, 64);
    best = Math.max(f4, f64);
    log(`| floor: sign + undici POST, 4 in flight | ${f4} | | |`);
    log(`| floor: sign + undici POST, 64 in flight | ${f64} | | |`);
  }
  const ratio = (x: number): string => (best > 0 ? (x / best).toFixed(3) : '–');
  // The whole backlog from a cold start (warm-up included), beside the warmed-up figure.
  const cold = (r: { coldRps: number }): string => (DRAIN_WARMUP > 0 ? `after ${DRAIN_WARMUP} warm-up deliveries; the whole ${DRAIN_WARMUP + N} from a cold start: ${r.coldRps}/s (${ratio(r.coldRps)}); ` : '');
  if (ONLY.has('drain1')) {
    const r = await drain(N, 1, 1);
    log(`| drain of ${N} queued, 1 endpoint | ${r.rps} | ${ratio(r.rps)} | ${describeShare(r.cpu)}${cold(r)}max RSS ${r.maxRssMb} MB, duplicates ${r.duplicates} |`);
  }
  let one32 = 0;
  if (ONLY.has('drain32') || ONLY.has('scale')) {
    const r = await drain(N, 32, 1);
    one32 = r.rps;
    log(`| drain of ${N} queued, 32 endpoints | ${r.rps} | ${ratio(r.rps)} | ${describeShare(r.cpu)}${cold(r)}max RSS ${r.maxRssMb} MB, duplicates ${r.duplicates} |`);
  }
  if (ONLY.has('scale') && STORE === 'postgres') {
    const r = await drain(N, 32, 2);
    log(`| drain of ${N} queued, 32 endpoints, 2 instances | ${r.rps} | ${ratio(r.rps)} | two ÷ one ${(r.rps / one32).toFixed(2)}, ${describeShare(r.cpu)}${cold(r)}duplicates ${r.duplicates} |`);
  }
  if (ONLY.has('latency')) {
    const rate = RATE;
    const r = await latency(rate, SECONDS, WARMUP_ORDERS);
    const warm = r.warmup ? `; the warm-up before it (${r.warmup.sent} orders, a fresh server): p50 ${r.warmup.p50} ms, p99 ${r.warmup.p99} ms` : '';
    log(`| latency at ${rate} orders/s (achieved ${r.achieved}/s, ${r.sent} events after the warm-up): createdAt → receipt | | | p50 ${r.p50} ms, p95 ${r.p95} ms, p99 ${r.p99} ms (the order's own answer: p50 ${r.answer.p50} ms, p99 ${r.answer.p99} ms)${warm} |`);
  }
  if (ONLY.has('backlog') || ONLY.has('claim')) {
    const small = await claimCost(1000);
    const big = await claimCost(BACKLOG);
    log(`| claim of 100 (store only), 1 000 pending vs ${values.backlog} pending | | | ${small} ms vs ${big} ms |`);
  }
  if (ONLY.has('backlog') || ONLY.has('rss')) {
    const r10 = await drain(10_000, 32, 1);
    const rBig = await drain(BACKLOG, 32, 1);
    log(`| drain of 10 000 vs ${values.backlog} queued, 32 endpoints | ${r10.rps} vs ${rBig.rps} | | max RSS ${r10.maxRssMb} MB vs ${rBig.maxRssMb} MB |`);
  }
} finally {
  receiver.server.close();
}
console.log(`\nbench:delivery on ${machine()}; store ${STORE}; server warnings/errors logged: ${serverLog.lines}`);
for (const line of serverLog.first) console.log(`  ${line}`);
console.log('');
console.log('| run | deliveries/s | ÷ floor | notes |\n|---|---:|---:|---|');
for (const line of out) console.log(line);
process.exit(0);
