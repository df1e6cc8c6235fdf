// npm run bench:partitions [-- --rows 200000 --batch 500 --rate 50]: issue 42's question, what
// expiring one day of events, deliveries and attempts costs on PostgreSQL
//   (a) with today's schema (the real migrations), by the real pruner's batches (prune.ts) in a
//       loop with the pruner's default pause, then the VACUUM that makes the space reusable;
//   (b) with the same rows in tables partitioned by day of created_at (a scratch schema built
//       here for the measurement only), by DETACH + DROP of the oldest day's partitions.
// `rows` orders over 2 simulated days, each one event, one delivered delivery and one attempt,
// as wide as the server writes them; the oldest day (half the rows) expires. Meanwhile another
// connection inserts single events at `rate` a second (the soak's 50 orders/s), timed one by
// one, beside the same stream with nothing expiring. WAL is the cluster's: another database's
// writes count too, so each expiry's WAL is also given net of the rate measured in its
// baseline window (the stream's inserts and everything else the server was doing).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { retentionSettings } from '../../server/retention/settings.ts';
import { migrate } from '../../server/store/postgres/migrate.ts';
import { prune } from '../../server/store/postgres/prune.ts';
import { createTestDatabase } from '../../server/store/postgres/testing.ts';
import type { PruneRequest } from '../../server/domain/store.ts';
import { machine } from './lib.ts';

const DEFAULTS = retentionSettings({});
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    batch: { type: 'string', default: String(DEFAULTS.batch) },
    rate: { type: 'string', default: '50' },
    baseline: { type: 'string', default: '10' },
  },
});
const ROWS = Number(values.rows);
const BATCH = Number(values.batch);
const RATE = Number(values.rate);
const BASELINE_S = Number(values.baseline);

const DAY = 86_400_000;
/** Midnight, so that a day of rows is a day partition. */
const T0 = Date.UTC(2026, 0, 1);
const CUTOFF = T0 + DAY;
/** Orders 1 … ROWS/2 - 1 are before CUTOFF (see AT): day 0's partition. */
const EXPIRED = Math.ceil(ROWS / 2) - 1;
const TABLES = ['events', 'deliveries', 'delivery_attempts'] as const;

// ---- the rows -------------------------------------------------------------------------------

const SEED = `
  INSERT INTO tenants VALUES ('ten_bench', 'Northwind Games Ltd', ${T0});
  INSERT INTO environments (id, tenant_id, name, wallet_balance, callback_secret_enc, created_at)
    VALUES ('env_bench', 'ten_bench', 'live', 0, 'v1.callback.bench', ${T0});
  INSERT INTO webhook_endpoints (id, environment_id, url, secret_enc, active, version, created_at, updated_at)
    VALUES ('we_bench', 'env_bench', 'https://hooks.northwind.example/payments', 'v1.endpoint.bench', true, 1, ${T0}, ${T0})`;

/** Order i's created_at: the rows spread evenly over 2 days, in seq order as the server writes them. */
const AT = `(${T0} + (i::bigint * ${2 * DAY}) / ${ROWS})`;
const ID = (prefix: string): string => `'${prefix}_' || lpad(i::text, 22, '0')`;
// An order.paid event as the server stores it (about 600 bytes of JSON, below the TOAST threshold).
const PAYLOAD = `json_build_object('id', ${ID('evt')}, 'type', 'order.paid', 'createdAt', to_char(to_timestamp(${AT} / 1000.0), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'data', json_build_object('order', json_build_object('id', ${ID('ord')}, 'orderNumber', 'ORD-' || lpad(i::text, 6, '0'), 'merchantReference', 'cart-' || i,
  'amount', json_build_object('value', '49.99', 'currency', 'EUR'), 'status', 'paid', 'paymentStatus', 'confirmed',
  'payment', json_build_object('assetId', 'usdc', 'networkId', 'ethereum', 'amountBaseUnits', '49990000', 'receivedBaseUnits', '49990000',
  'txHash', '0x' || md5(i::text) || md5((i + 1)::text)), 'createdAt', to_char(to_timestamp(${AT} / 1000.0), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))))::text`;
// A 2xx answer's body, as receivers send one (the attempt keeps it, capped).
const BODY = `'{"received":true,"id":"' || ${ID('evt')} || '"}'`;

/** The three INSERT … SELECTs; `part` adds the partition key the partitioned children carry. */
function loadStatements(schema: string, part: boolean): string[] {
  const series = `FROM generate_series(1, ${ROWS}) i`;
  return [
    `INSERT INTO ${schema}.events (id, environment_id, type, payload, order_id, merchant_reference, created_at)
       SELECT ${ID('evt')}, 'env_bench', 'order.paid', ${PAYLOAD}, ${ID('ord')}, 'cart-' || i, ${AT} ${series}`,
    `INSERT INTO ${schema}.deliveries (id, environment_id, event_id, kind, endpoint_id, endpoint_version, url, state, attempt_count, cycle,
         order_id, merchant_reference, created_at, updated_at, delivered_at${part ? ', event_created_at' : ''})
       SELECT ${ID('dlv')}, 'env_bench', ${ID('evt')}, 'order_event', 'we_bench', 1, 'https://hooks.northwind.example/payments', 'delivered', 1, 1,
         ${ID('ord')}, 'cart-' || i, ${AT}, ${AT} + 80, ${AT} + 80${part ? `, ${AT}` : ''} ${series}`,
    `INSERT INTO ${schema}.delivery_attempts (delivery_id, cycle, number, started_at, duration_ms, signature_timestamp, outcome, status_code,
         response_body, success${part ? ', delivery_created_at' : ''})
       SELECT ${ID('dlv')}, 1, 1, ${AT} + 20, 60, (${AT} + 20) / 1000, 'response', 200, ${BODY}, true${part ? `, ${AT}` : ''} ${series}`,
  ];
}

// ---- the partitioned copy (scratch schema `part`, never a migration) ------------------------

// Every unique key and foreign key must include the partition key: events are unique by
// (id, created_at), deliveries carry their event's created_at to reference it, attempts their
// delivery's. The indexes are the real ones (0001-0006), made per partition by PostgreSQL.
const PARTITIONED = `
  CREATE SCHEMA part;
  CREATE TABLE part.events (LIKE public.events INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    PRIMARY KEY (seq, created_at), UNIQUE (id, created_at)) PARTITION BY RANGE (created_at);
  CREATE INDEX ON part.events (environment_id, seq DESC);
  CREATE INDEX ON part.events (environment_id, type, seq DESC);
  CREATE INDEX ON part.events (environment_id, tx_id, seq);
  CREATE TABLE part.deliveries (LIKE public.deliveries INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED,
    event_created_at BIGINT NOT NULL, PRIMARY KEY (seq, created_at), UNIQUE (id, created_at),
    FOREIGN KEY (event_id, event_created_at) REFERENCES part.events (id, created_at)) PARTITION BY RANGE (created_at);
  CREATE INDEX ON part.deliveries (next_attempt_at, seq) INCLUDE (destination) WHERE state = 'pending';
  CREATE INDEX ON part.deliveries (endpoint_id, endpoint_version) WHERE state = 'pending';
  CREATE INDEX ON part.deliveries (environment_id, seq DESC);
  CREATE INDEX ON part.deliveries (event_id);
  CREATE INDEX ON part.deliveries (environment_id, order_id) WHERE order_id IS NOT NULL;
  CREATE INDEX ON part.deliveries (environment_id, merchant_reference) WHERE merchant_reference IS NOT NULL;
  CREATE INDEX ON part.deliveries (destination, next_attempt_at, seq) WHERE state = 'pending';
  CREATE TABLE part.delivery_attempts (LIKE public.delivery_attempts INCLUDING CONSTRAINTS,
    delivery_created_at BIGINT NOT NULL, PRIMARY KEY (delivery_id, cycle, number, delivery_created_at),
    FOREIGN KEY (delivery_id, delivery_created_at) REFERENCES part.deliveries (id, created_at)) PARTITION BY RANGE (delivery_created_at)`;

/** Day d's partition of each table: the 2 loaded days and the current one, made ahead of time. */
function partitionDdl(day: number): string {
  const range = `FOR VALUES FROM (${T0 + day * DAY}) TO (${T0 + (day + 1) * DAY}) WITH (autovacuum_enabled = false)`;
  return TABLES.map((t) => `CREATE TABLE part.${t}_d${day} PARTITION OF part.${t} ${range}`).join(';\n');
}

// ---- measuring ------------------------------------------------------------------------------

async function walLsn(db: pg.Client): Promise<string> {
  return (await db.query<{ lsn: string }>('SELECT pg_current_wal_lsn() AS lsn')).rows[0]?.lsn ?? '0/0';
}

async function walSince(db: pg.Client, from: string): Promise<number> {
  return Number((await db.query<{ b: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS b', [from])).rows[0]?.b);
}

/** The three tables with their indexes and TOAST, partitions included, in bytes. */
async function sizeOf(db: pg.Client, schema: string): Promise<number> {
  // A plain table is its own only leaf (pg_partition_tree gives nothing for it).
  const r = await db.query<{ s: string }>(
    `SELECT sum(pg_total_relation_size(c.oid)) AS s FROM pg_class c
      WHERE c.oid = ANY ($1::regclass[]) OR c.oid IN (SELECT relid FROM unnest($1::regclass[]) t, pg_partition_tree(t) WHERE isleaf)`,
    [TABLES.map((t) => `${schema}.${t}`)],
  );
  return Number(r.rows[0]?.s);
}

/** Stream rows made so far: ids and times stay unique from one stream to the next. */
let streamed = 0;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Single-row INSERTs into `schema`.events at RATE a second on a connection of their own. */
function insertStream(url: string, schema: string): { stop(): Promise<number[]> } {
  let running = true;
  const done = (async () => {
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const latencies: number[] = [];
    const start = performance.now();
    // Paced by schedule: an insert held up by a lock delays the next ones, and they count it.
    for (let k = 0; running; k++) {
      await sleep(Math.max(0, start + (k * 1000) / RATE - performance.now()));
      const n = streamed++;
      const t = performance.now();
      await db.query({
        name: 'ins',
        text: `INSERT INTO ${schema}.events (id, environment_id, type, payload, created_at) VALUES ($1, 'env_bench', 'order.paid', $2, $3)`,
        values: [`evt_stream_${n}`, `{"id":"evt_stream_${n}","type":"order.paid","data":{}}`.padEnd(600, ' '), T0 + 2 * DAY + n],
      });
      latencies.push(performance.now() - t);
    }
    await db.end();
    return latencies;
  })();
  return {
    stop: async () => {
      running = false;
      return done;
    },
  };
}

interface Latency {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

function percentiles(xs: number[]): Latency {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1] ?? Number.NaN };
}

/** The stream alone for BASELINE_S: its latency, and the WAL rate of the server meanwhile. */
async function baseline(db: pg.Client, url: string, schema: string): Promise<{ latency: Latency; walPerS: number }> {
  const lsn = await walLsn(db);
  const t = performance.now();
  const stream = insertStream(url, schema);
  await sleep(BASELINE_S * 1000);
  const latency = percentiles(await stream.stop());
  return { latency, walPerS: (await walSince(db, lsn)) / ((performance.now() - t) / 1000) };
}

/** What an expiry did: its transactions, their summed time, the locks they took. */
interface Work {
  batches: number;
  busyMs: number;
  locks: string;
}

interface Expiry extends Work {
  ms: number;
  wal: number;
  latency: Latency;
}

/** Runs `expire` with the stream on (from 1 s before to 1 s after, so a short expiry is inside a window). */
async function during(db: pg.Client, url: string, schema: string, expire: () => Promise<Work>): Promise<Expiry> {
  const stream = insertStream(url, schema);
  await sleep(1000);
  const lsn = await walLsn(db);
  const t = performance.now();
  const r = await expire();
  const ms = performance.now() - t;
  const wal = await walSince(db, lsn);
  await sleep(1000);
  return { ms, wal, latency: percentiles(await stream.stop()), ...r };
}

// ---- the two expiries -----------------------------------------------------------------------

/** The real pruner's batches until none is left, `pauseMs` apart as the pruner runs them. */
async function pruneDay(pool: pg.Pool): Promise<Work> {
  const req: PruneRequest = { activityBefore: { live: CUTOFF, test: CUTOFF }, keysBefore: 0, limit: BATCH };
  let batches = 0;
  let deleted = 0;
  let busyMs = 0;
  for (let more = true; more; batches++) {
    const t = performance.now();
    const r = await prune(pool, req);
    busyMs += performance.now() - t;
    deleted += r.deleted.events;
    more = r.more;
    if (more) await sleep(DEFAULTS.pauseMs);
  }
  // Both ways must remove the same rows for the comparison to hold.
  if (deleted !== EXPIRED) throw new Error(`the pruner removed ${deleted} events, not ${EXPIRED}`);
  return { batches, busyMs, locks: 'RowExclusiveLock (DELETE), one batch at a time' };
}

/** Lock modes, strongest first. */
const STRENGTH = ['AccessExclusiveLock', 'ExclusiveLock', 'ShareRowExclusiveLock', 'ShareLock', 'ShareUpdateExclusiveLock', 'RowExclusiveLock', 'RowShareLock', 'AccessShareLock'];

/** Day 0's partitions detached and dropped in one transaction, children first (the foreign keys). */
async function dropDay(db: pg.Client): Promise<Work> {
  const t = performance.now();
  await db.query('BEGIN');
  for (const table of [...TABLES].reverse()) {
    await db.query(`ALTER TABLE part.${table} DETACH PARTITION part.${table}_d0`);
    await db.query(`DROP TABLE part.${table}_d0`);
  }
  // What the transaction holds on the parents, which every insert needs: read, not assumed.
  const held = await db.query<{ mode: string }>(
    `SELECT mode FROM pg_locks
      WHERE pid = pg_backend_pid() AND locktype = 'relation' AND relation::regclass::text IN ('part.events', 'part.deliveries', 'part.delivery_attempts')`,
  );
  await db.query('COMMIT');
  const modes = [...new Set(held.rows.map((r) => r.mode))].sort((x, y) => STRENGTH.indexOf(x) - STRENGTH.indexOf(y)).join(', ');
  return { batches: 1, busyMs: performance.now() - t, locks: `${modes} on the parents, until commit` };
}

async function timedVacuum(db: pg.Client): Promise<{ ms: number; wal: number }> {
  const lsn = await walLsn(db);
  const t = performance.now();
  await db.query(`VACUUM ${TABLES.join(', ')}`);
  return { ms: performance.now() - t, wal: await walSince(db, lsn) };
}

/** Rows as the pruner leaves them: vacuumed and analysed, autovacuum kept out of the timings. */
async function load(db: pg.Client, schema: string, part: boolean): Promise<void> {
  for (const s of loadStatements(schema, part)) await db.query(s);
  if (!part) for (const t of TABLES) await db.query(`ALTER TABLE ${t} SET (autovacuum_enabled = false)`);
  await db.query(`VACUUM ANALYZE ${TABLES.map((t) => `${schema}.${t}`).join(', ')}`);
}

// ---- the report -----------------------------------------------------------------------------

interface Run {
  base: { latency: Latency; walPerS: number };
  expiry: Expiry;
  sizeBefore: number;
  sizeAfter: number;
  vacuum?: { ms: number; wal: number; size: number };
}

const mb = (b: number): string => (b / 2 ** 20).toFixed(1);
const lat = (l: Latency): string => `${l.p50.toFixed(1)} / ${l.p99.toFixed(1)} / ${l.max.toFixed(1)} (${l.n})`;
/** WAL less what the baseline rate (the stream, the other databases) would have written meanwhile. */
const net = (r: Run, wal: number, ms: number): number => Math.max(0, wal - r.base.walPerS * (ms / 1000));
const netWal = (r: Run): number => net(r, r.expiry.wal, r.expiry.ms);

function report(a: Run, b: Run): string {
  const expired = EXPIRED;
  const row = (name: string, f: (r: Run) => string): string => `| ${name} | ${f(a)} | ${f(b)} |`;
  return [
    '| per expiry of one day | (a) batched DELETE (prune.ts) | (b) DETACH + DROP partitions |',
    '|---|---:|---:|',
    row('wall time (with the pauses), s', (r) => (r.expiry.ms / 1000).toFixed(2)),
    row('transactions (batches)', (r) => String(r.expiry.batches)),
    row('time inside them, s', (r) => (r.expiry.busyMs / 1000).toFixed(2)),
    row('WAL, MB (cluster; net of the baseline rate)', (r) => `${mb(r.expiry.wal)} (${mb(netWal(r))})`),
    row('per expired order: µs inside the transactions, WAL bytes (net)', (r) => `${((r.expiry.busyMs * 1000) / expired).toFixed(0)} µs, ${(netWal(r) / expired).toFixed(0)} B`),
    row('VACUUM afterwards: s, WAL MB (net)', (r) => (r.vacuum ? `${(r.vacuum.ms / 1000).toFixed(2)}, ${mb(r.vacuum.wal)} (${mb(net(r, r.vacuum.wal, r.vacuum.ms))})` : 'none needed')),
    row('size before → after expiry → after VACUUM, MB', (r) => `${mb(r.sizeBefore)} → ${mb(r.sizeAfter)}${r.vacuum ? ` → ${mb(r.vacuum.size)}` : ''}`),
    row('INSERT p50 / p99 / max ms (n), no expiry', (r) => lat(r.base.latency)),
    row('INSERT p50 / p99 / max ms (n), during expiry', (r) => lat(r.expiry.latency)),
    row('locks the expiry takes', (r) => r.expiry.locks),
  ].join('\n');
}

async function runA(db: pg.Client, pool: pg.Pool, url: string): Promise<Run> {
  await load(db, 'public', false);
  const sizeBefore = await sizeOf(db, 'public');
  const base = await baseline(db, url, 'public');
  const expiry = await during(db, url, 'public', () => pruneDay(pool));
  const sizeAfter = await sizeOf(db, 'public');
  const v = await timedVacuum(db);
  return { base, expiry, sizeBefore, sizeAfter, vacuum: { ...v, size: await sizeOf(db, 'public') } };
}

async function runB(db: pg.Client, url: string): Promise<Run> {
  await db.query(PARTITIONED);
  for (const day of [0, 1, 2]) await db.query(partitionDdl(day));
  await load(db, 'part', true);
  const sizeBefore = await sizeOf(db, 'part');
  const base = await baseline(db, url, 'part');
  const expiry = await during(db, url, 'part', () => dropDay(db));
  return { base, expiry, sizeBefore, sizeAfter: await sizeOf(db, 'part') };
}

const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const test = await createTestDatabase();
const pool = new pg.Pool({ connectionString: test.url, max: 2 });
const db = new pg.Client({ connectionString: test.url });
try {
  await db.connect();
  await migrate(pool);
  await db.query(SEED);
  const startLoad = loadavg();
  const a = await runA(db, pool, test.url);
  const b = await runB(db, test.url);
  const version = (await db.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version;
  console.log(`\nbench:partitions on ${machine()}, PostgreSQL ${version}, load average ${startLoad} at the start, ${loadavg()} at the end`);
  console.log(`${ROWS} orders (events, deliveries, attempts each) over 2 days; the oldest ${EXPIRED} of each expire; batch ${BATCH}, pause ${DEFAULTS.pauseMs} ms; INSERT stream ${RATE}/s, baseline ${BASELINE_S} s\n`);
  console.log(report(a, b));
} finally {
  await db.end().catch(() => undefined);
  await pool.end();
  await test.drop();
}
