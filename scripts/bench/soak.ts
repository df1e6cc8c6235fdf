// npm run bench:soak [-- --store sqlite,postgres --minutes 30 --window 5 --retention 5m --rate 50]
//
// Running for months, compressed: the real server (a child process) takes a steady stream of
// orders with webhooks (each with an Idempotency-Key) for --minutes, with every retention
// shortened to --retention, so the pruner (server/retention/) is removing as much as comes in
// well before the end. Per window of --window minutes it reports the database's size, the rows
// of each table, p50/p95/p99 of the order's answer and of event createdAt → receipt (a loopback
// receiver in this process), and the pruner's own time (its batches' summed duration, read from
// the server's /metrics). At the end: bytes per order at steady state, for sizing a disk.
//
// The goals of issue 42: the last window's size at most 1.1 × the peak, and its p99 at most
// 1.2 × the first window's (the first window is the warm-up: a fresh server compiling its paths).
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Agent, request } from 'undici';
import { createManagementClient } from '../../client/api.ts';
import { parseDuration } from '../../server/retention/settings.ts';
import { machine, startServer, type DemoTenant, type RunningServer } from './lib.ts';
import { checkSettings, positiveIntSetting } from '../lib/settings.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite,postgres' },
    minutes: { type: 'string', default: '30' },
    window: { type: 'string', default: '5' },
    retention: { type: 'string', default: '5m' },
    rate: { type: 'string', default: '50' },
    'prune-interval': { type: 'string', default: '15s' },
    // A PostgreSQL server with autovacuum off (this project's test server) never reclaims the
    // pruned rows: --vacuum runs a plain VACUUM of the pruned tables at each window's end, as
    // autovacuum (naptime 1 min) would.
    vacuum: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log('npm run bench:soak -- [--store sqlite,postgres] [--minutes 30] [--window 5] [--retention 5m] [--rate 50] [--prune-interval 15s] [--vacuum]');
  process.exit(0);
}
const MINUTES = checkSettings('bench:soak', () => positiveIntSetting('--minutes', values.minutes));
const WINDOW_MIN = checkSettings('bench:soak', () => positiveIntSetting('--window', values.window));
const RATE = checkSettings('bench:soak', () => positiveIntSetting('--rate', values.rate));
const RETENTION_MS = checkSettings('bench:soak', () => parseDuration('--retention', values.retention));
checkSettings('bench:soak', () => parseDuration('--prune-interval', values['prune-interval']));
const STORES = values.store.split(',');
for (const s of STORES) if (s !== 'sqlite' && s !== 'postgres') throw new Error(`--store: sqlite and/or postgres, not ${s}`);
const METRICS_TOKEN = 'soak-metrics-token-0123456789';
const TABLES = ['orders', 'events', 'deliveries', 'delivery_attempts', 'order_idempotency_keys'] as const;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

/** What the receiver saw in the current window: event createdAt → receipt, in ms. */
let receipts: number[] = [];
const receiver: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const createdAt = Date.parse((JSON.parse(Buffer.concat(chunks).toString()) as { createdAt: string }).createdAt);
    receipts.push(at - createdAt);
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

interface Target {
  /** A plain VACUUM of the pruned tables (PostgreSQL; nothing on SQLite). */
  vacuum(): Promise<void>;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  size(): Promise<number>;
  rows(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

async function target(store: string): Promise<Target> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-soak-'));
  const ttl = `${Math.round(RETENTION_MS / 1000)}s`;
  const env: NodeJS.ProcessEnv = {
    WEBHOOK_ALLOW_INSECURE_URLS: 'true', RATE_LIMIT_RPS: '0', VALIDATE_RESPONSES: 'false', CHECK_NESTED_TRANSACTIONS: 'false', NODE_ENV: 'test',
    SECRETS_KEY: Buffer.alloc(32, 7).toString('base64url'), METRICS_TOKEN,
    RETENTION_LIVE: ttl, RETENTION_TEST: ttl, IDEMPOTENCY_KEY_RETENTION: ttl, PRUNE_INTERVAL: values['prune-interval'],
  };
  if (store === 'postgres') {
    const { createTestDatabase } = await import('../../server/store/postgres/testing.ts');
    const db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    return {
      vacuum: async () => void (await client.query('VACUUM events, deliveries, delivery_attempts, delivery_leases, order_idempotency_keys')),
      env: { ...env, DATABASE_URL: db.url },
      dataDir,
      size: async () => Number((await client.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n')).rows[0]?.n),
      rows: async () => {
        const counts: Record<string, number> = {};
        for (const t of TABLES) counts[t] = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`)).rows[0]?.n);
        return counts;
      },
      close: async () => {
        await client.end();
        await db.drop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  const file = path.join(dataDir, 'payments.db');
  let reader: Database.Database | null = null;
  const fileSize = async (f: string): Promise<number> => (await stat(f).catch(() => ({ size: 0 }))).size;
  return {
    vacuum: async () => undefined,
    env,
    dataDir,
    // The file and its log: the WAL is reset after each checkpoint but keeps its size.
    size: async () => (await fileSize(file)) + (await fileSize(`${file}-wal`)),
    rows: async () => {
      reader ??= new Database(file, { readonly: true });
      const db = reader;
      return Object.fromEntries(TABLES.map((t) => [t, (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n]));
    },
    close: async () => {
      reader?.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The pruner's summed batch time (s) and batch count so far, from the server's /metrics. */
async function prunerTime(url: string): Promise<{ seconds: number; batches: number }> {
  const r = await request(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await r.body.text();
  const sum = /retention_prune_batch_duration_seconds_sum\{outcome="ran"\} ([0-9.e+-]+)/.exec(text)?.[1];
  const count = /retention_prune_batch_duration_seconds_count\{outcome="ran"\} ([0-9]+)/.exec(text)?.[1];
  return { seconds: Number(sum ?? 0), batches: Number(count ?? 0) };
}

interface WindowRow {
  minute: number;
  orders: number;
  bytes: number;
  rows: Record<string, number>;
  answer: [number, number, number];
  receipt: [number, number, number];
  prunerMs: number;
  prunerBatches: number;
}

async function soak(store: string): Promise<{ rows: WindowRow[]; baseline: number }> {
  const t = await target(store);
  let server: RunningServer | null = null;
  const agent = new Agent({ connections: 32, keepAliveTimeout: 60_000 });
  try {
    server = await startServer({ env: t.env, dataDir: t.dataDir });
    let tenant: DemoTenant | null = server.tenant;
    if (!tenant) {
      const { createTenantViaAdmin } = await import('./admin.ts');
      tenant = await createTenantViaAdmin({ ...t.env, DATA_DIR: t.dataDir });
    }
    const management = createManagementClient({ baseUrl: server.url, memberToken: tenant.memberToken });
    const ep = await management.POST('/v2/webhooks/endpoints', { body: { url: receiverUrl } });
    if (ep.response.status !== 201) throw new Error(`endpoint: ${ep.response.status}`);
    // The empty schema's size (PostgreSQL's catalogue alone is several MB), for bytes per order.
    const baseline = await t.size();
    const headers = { 'content-type': 'application/json', 'x-api-key': tenant.apiKey, 'x-api-hash': tenant.apiHash };
    const rows: WindowRow[] = [];
    const windowMs = WINDOW_MIN * 60_000;
    const start = performance.now();
    let seq = 0;
    let failures = 0;
    let pruned = await prunerTime(server.url);
    for (let w = 1; w <= Math.ceil(MINUTES / WINDOW_MIN); w++) {
      const answers: number[] = [];
      receipts = [];
      const windowStart = performance.now();
      const sent = seq;
      const end = start + Math.min(w * windowMs, MINUTES * 60_000);
      const inflight = new Set<Promise<void>>();
      // Paced: order i leaves at its slot of the rate, at most 64 unanswered at once.
      while (performance.now() < end) {
        const due = windowStart + ((seq - sent) * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 1) await sleep(Math.min(wait, end - performance.now()));
        if (performance.now() >= end) break;
        while (inflight.size >= 64) await Promise.race(inflight);
        const i = seq++;
        const at = performance.now();
        const p = request(`${server.url}/v2/orders`, {
          method: 'POST',
          dispatcher: agent,
          headers: { ...headers, 'idempotency-key': `soak-${i}` },
          body: JSON.stringify({ merchantReference: `soak-${i}`, amountMinor: 100 + (i % 1000) }),
        }).then(async (r) => {
          await r.body.dump();
          if (r.statusCode === 201) answers.push(performance.now() - at);
          else failures++;
        });
        inflight.add(p);
        void p.finally(() => inflight.delete(p));
      }
      await Promise.all(inflight);
      if (values.vacuum) await t.vacuum();
      const now = await prunerTime(server.url);
      const ms = (xs: number[]): [number, number, number] => [percentile(xs, 50), percentile(xs, 95), percentile(xs, 99)].map((x) => Math.round(x * 10) / 10) as [number, number, number];
      const row: WindowRow = {
        minute: Math.round((performance.now() - start) / 60_000),
        orders: seq - sent,
        bytes: await t.size(),
        rows: await t.rows(),
        answer: ms(answers),
        receipt: ms(receipts),
        prunerMs: Math.round((now.seconds - pruned.seconds) * 1000),
        prunerBatches: now.batches - pruned.batches,
      };
      pruned = now;
      rows.push(row);
      console.error(`${store} ${JSON.stringify(row)}`);
    }
    if (failures > 0) console.error(`${store}: ${failures} orders failed`);
    return { rows, baseline };
  } finally {
    await agent.close();
    await server?.stop();
    await t.close();
  }
}

const mb = (b: number): string => (b / 1_048_576).toFixed(1);
const out: string[] = [`bench:soak on ${machine()}: ${RATE} orders/s for ${MINUTES} min, retention ${values.retention} (events, deliveries, attempts, idempotency keys), pruner every ${values['prune-interval']}, windows of ${WINDOW_MIN} min${values.vacuum ? ', VACUUM of the pruned tables at each window end (PostgreSQL)' : ''}`, ''];
for (const store of STORES) {
  const { rows, baseline } = await soak(store);
  out.push(`### ${store}`, '', `| min | orders | DB MB | ${TABLES.join(' | ')} | answer p50/p95/p99 ms | event → receipt p50/p95/p99 ms | pruner ms (batches) |`, `|${'---|'.repeat(TABLES.length + 6)}`);
  for (const r of rows) {
    out.push(`| ${r.minute} | ${r.orders} | ${mb(r.bytes)} | ${TABLES.map((t) => r.rows[t]).join(' | ')} | ${r.answer.join(' / ')} | ${r.receipt.join(' / ')} | ${r.prunerMs} (${r.prunerBatches}) |`);
  }
  const peak = Math.max(...rows.map((r) => r.bytes));
  const last = rows[rows.length - 1]!;
  const first = rows[0]!;
  // At steady state the database holds one retention period of activity plus every order.
  const perOrder = (last.bytes - baseline) / (RATE * (RETENTION_MS / 1000));
  const windowSeconds = WINDOW_MIN * 60;
  out.push(
    '',
    `last/peak size ${(last.bytes / peak).toFixed(2)} (goal ≤ 1.1); last/first window p99: answer ${(last.answer[2] / first.answer[2]).toFixed(2)}, event → receipt ${(last.receipt[2] / first.receipt[2]).toFixed(2)} (goal ≤ 1.2); pruner ${((last.prunerMs / 1000 / windowSeconds) * 100).toFixed(2)} % of the last window's wall time; ${Math.round(perOrder)} bytes per order of one retention period at steady state (the database less its empty size of ${mb(baseline)} MB, ÷ the orders of one period; orders themselves are kept for good)`,
    '',
  );
}
receiver.close();
console.log(out.join('\n'));
