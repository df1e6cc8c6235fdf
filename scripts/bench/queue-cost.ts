// npx tsx scripts/bench/queue-cost.ts [--deliveries N] [--batch B] [--endpoints K] [--steady]
// [--exec SQL]: what the PostgreSQL delivery queue itself costs a delivery, without HTTP. N order
// events are queued (each fanned out to the endpoints that take its type), then drained as the
// worker drains them: a claim of B, each batch recorded (completeAndClaim), the next claimed.
// --steady drains the first N unmeasured, then measures N more with B new events queued before
// each claim (the backlog of the orders row, not a drain's). Reports the CPU of the queue's
// PostgreSQL backends (read from /proc by their pids, so other databases' work on a shared
// machine does not count), claims and recorded batches apart, Node's CPU, the deliveries' row
// versions (HOT or not) and index scans. --exec runs SQL once migrated: a schema variant to
// measure (an index dropped, a fillfactor). PLANS=1 lists the queue connections' plan counts.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createTestDatabase } from '../../server/store/postgres/testing.ts';
import { openPostgresStore } from '../../server/store/postgres/store.ts';
import { newDeliveryId } from '../../server/domain/ids.ts';
import type { ClaimedDelivery, Completion } from '../../server/domain/store.ts';
import { attempt, endpointRecord, eventRecord, seedEnvironment } from '../../server/store/suite/fixtures.ts';
import { ORDER_EVENT_TYPES, type EventRecord, type UntargetedDelivery } from '../../server/domain/model.ts';

const { values } = parseArgs({ options: { deliveries: { type: 'string', default: '20000' }, batch: { type: 'string', default: '16' }, endpoints: { type: 'string', default: '1' }, steady: { type: 'boolean', default: false }, exec: { type: 'string' } } });
const N = Number(values.deliveries);
const B = Number(values.batch);
const K = Number(values.endpoints);
const steady = values.steady;

const HZ = 100;
function cpuOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / HZ; // utime + stime, seconds
}

const pgCpu = (pids: readonly number[]): number => pids.reduce((a, p) => a + cpuOf(p), 0);

const db = await createTestDatabase();
const store = await openPostgresStore({ connectionString: db.url, guardNesting: false });
await store.migrate();
const admin = new pg.Client({ connectionString: db.url });
await admin.connect();
if (values.exec !== undefined) await admin.query(values.exec);
try {
  const { env } = await seedEnvironment(store);
  // K endpoints: the first takes every type, each other one type of its own.
  const types = [...ORDER_EVENT_TYPES];
  const endpoints = Array.from({ length: K }, (_, i) => endpointRecord(env, { url: `https://hooks.northwind.example/${i}`, eventTypes: i === 0 ? null : [types[(i - 1) % types.length]!] }));
  await store.transaction(async (tx) => {
    for (const e of endpoints) await tx.endpoints.insert(e);
  });
  let made = 0;
  // Orders' events, `n` in one transaction (as a group commit writes them).
  const queueEvents = async (n: number): Promise<void> => {
    const now = Date.now();
    await store.transaction(async (tx) => {
      for (const end = made + n; made < end; made++) {
        const event = eventRecord(env, { type: types[made % types.length]!, orderId: `ord_${made}`, merchantReference: `ref-${made}`, createdAt: now });
        await tx.deliveries.insertWithEvent(event, untargeted(event));
      }
    });
  };
  // --steady: a backlog of one batch, each drained batch replaced by a new one (the orders row); else N queued first.
  while (made < N) await queueEvents(Math.min(200, N - made));
  const owner = 'bench-worker';
  const opts = (limit: number) => ({ owner, now: Date.now(), leaseMs: 30_000, limit, perEndpointLimit: 64, exclusive: true });
  if (steady) {
    // Warm-up: the first N drained unmeasured, so the measured rows sit beside delivered ones.
    for (let c = await store.queue.claim(opts(256)); c.length > 0; c = await store.queue.claim(opts(256))) await store.queue.completeAndClaim(owner, completionsOf(c), null);
    await queueEvents(B);
  }
  await admin.query('VACUUM ANALYZE');
  const before = await counters(admin);
  const pids = async (): Promise<number[]> => (await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '%:queue'`)).rows.map((r) => r.pid);
  let claimed = await store.queue.claim(opts(B));
  const seen = await pids();
  const cpu0 = new Map(seen.map((p) => [p, cpuOf(p)]));
  const node0 = process.cpuUsage();
  const t0 = performance.now();
  let done = 0;
  let completing = 0;
  let claiming = 0;
  while (claimed.length > 0) {
    if (steady && made < 2 * N) await queueEvents(B);
    const completions = completionsOf(claimed);
    const c0 = pgCpu(seen);
    const r = await store.queue.completeAndClaim(owner, completions, null);
    const c1 = pgCpu(seen);
    claimed = await store.queue.claim(opts(B));
    completing += c1 - c0;
    claiming += pgCpu(seen) - c1;
    done += r.applied.filter(Boolean).length;
  }
  const seconds = (performance.now() - t0) / 1000;
  if (process.env.PLANS !== undefined) {
    // Each queue connection's prepared statements: generic or custom plans.
    const qp = (store as unknown as { queuePool: pg.Pool }).queuePool;
    const clients = await Promise.all([qp.connect(), qp.connect(), qp.connect()]);
    for (const c of clients) console.log((await c.query(`SELECT name, generic_plans, custom_plans FROM pg_prepared_statements`)).rows);
    for (const c of clients) c.release();
  }
  const node = process.cpuUsage(node0);
  let pgSeconds = 0;
  for (const p of new Set([...seen, ...(await pids())])) pgSeconds += cpuOf(p) - (cpu0.get(p) ?? 0);
  const after = await counters(admin);
  const per = (x: number): string => (x / done).toFixed(2);
  console.log(`${done} deliveries (${N} events, ${K} endpoints) in batches of ${B}: ${Math.round(done / seconds)}/s; ` +
    `PostgreSQL queue backends ${Math.round((pgSeconds * 1e6) / done)} µs a delivery, Node ${Math.round(((node.user + node.system) / done))} µs; ` +
    `deliveries versions ${per(after.upd - before.upd)} (HOT ${per(after.hot - before.hot)}); of the PostgreSQL CPU, claims ${Math.round((claiming * 1e6) / done)} µs, completions ${Math.round((completing * 1e6) / done)} µs`);
  console.log(`index scans: ${Object.entries(after.idx).map(([k, v]) => `${k} ${v.scan - (before.idx[k]?.scan ?? 0)}`).join(', ')}`);
} finally {
  await admin.end();
  await store.close();
  if (process.env.KEEP === undefined) await db.drop();
  else console.log(db.url);
}

function completionsOf(claimed: readonly ClaimedDelivery[]): Completion[] {
  const at = Date.now();
  return claimed.map((c) => ({
    deliveryId: c.delivery.id,
    leaseExpiresAt: c.delivery.leaseExpiresAt!,
    result: { attempt: attempt(c.delivery.id, { cycle: c.delivery.cycle, number: c.delivery.attemptCount + 1, startedAt: at, durationMs: 1 }), state: 'delivered', nextAttemptAt: null, deliveredAt: at + 1 },
  }));
}

function untargeted(event: EventRecord): UntargetedDelivery {
  return {
    id: newDeliveryId(), environmentId: event.environmentId, eventId: event.id, kind: 'order_event',
    state: 'pending', attemptCount: 0, cycle: 1, nextAttemptAt: event.createdAt, leaseOwner: null, leaseExpiresAt: null,
    orderId: event.orderId, merchantReference: event.merchantReference, transactionId: event.transactionId, createdAt: event.createdAt, updatedAt: event.createdAt, deliveredAt: null,
  };
}

async function counters(c: pg.Client): Promise<{ upd: number; hot: number; idx: Record<string, { scan: number }> }> {
  await c.query('SELECT pg_stat_force_next_flush()');
  const t = (await c.query<{ n_tup_upd: string; n_tup_hot_upd: string }>(`SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'deliveries'`)).rows[0]!;
  const idx = (await c.query<{ indexrelname: string; idx_scan: string }>(
    `SELECT s.indexrelname, s.idx_scan FROM pg_stat_user_indexes s WHERE s.relname IN ('deliveries', 'delivery_leases', 'delivery_attempts')`)).rows;
  return { upd: Number(t.n_tup_upd), hot: Number(t.n_tup_hot_upd), idx: Object.fromEntries(idx.map((r) => [r.indexrelname, { scan: Number(r.idx_scan) }])) };
}
