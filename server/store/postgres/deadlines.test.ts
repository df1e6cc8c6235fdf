// Deadlines on a real PostgreSQL reached through the fault proxy (server/faults/tcp-proxy.ts):
// a silent host ends every wait by our clock, the connection that missed one is never pooled
// again, a fail-over to a silent old host is followed, a lost COMMIT is OutcomeUnknown, and
// admission control refuses at once what would only queue.
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../../faults/tcp-proxy.ts';
import { realTimers } from '../../timers.ts';
import { OutcomeUnknown } from '../../domain/store-errors.ts';
import { deliveryRecord, payoutRecord, seedEndpointAndEvent, seedEnvironment, T0 } from '../suite/fixtures.ts';
import { isStoreUnavailable } from '../../domain/store-unavailable.ts';
import { Conn } from './db.ts';
import { DeadlineExceeded, deadlineClient, sessionSettings } from './deadlines.ts';
import { openPostgresStore, type PostgresStore } from './store.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';
import { until } from '../../../testing/until.ts';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => undefined);
});

async function throughProxy(): Promise<{ db: TestDatabase; proxy: FaultProxy; url: string; upstreamPort: number }> {
  const db = await createTestDatabase();
  cleanup.push(() => db.drop());
  const target = new URL(db.url);
  const proxy = await startFaultProxy({ upstreamPort: Number(target.port || 5432), upstreamHost: target.hostname });
  cleanup.push(() => proxy.close());
  const url = new URL(db.url);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return { db, proxy, url: url.toString(), upstreamPort: Number(target.port || 5432) };
}

// Short enough that waiting one out costs a test little, wide enough that a loaded machine
// (a CI run on three Node majors) still connects, migrates and answers within them: a connect
// deadline of 500 ms once failed a store's opening there.
const DEADLINES = { statementMs: 1_000, connectMs: 3_000, transactionMs: 1_500 };

async function storeThrough(url: string, opts: { maxQueued?: number } = {}): Promise<PostgresStore> {
  const store = await openPostgresStore({ connectionString: url, poolSize: 4, log: pino({ level: 'silent' }), deadlines: DEADLINES, ...opts });
  cleanup.push(() => store.close());
  await store.migrate();
  return store;
}

describe('PostgreSQL deadlines', () => {
  it('a query to a silent host fails by its deadline, its connection is destroyed, and a fresh one serves once the host is back', async () => {
    const { proxy, url } = await throughProxy();
    let destroyed = 0;
    const pool = new pg.Pool({ connectionString: url, max: 2, Client: deadlineClient(realTimers, 400, () => destroyed++), ...sessionSettings(DEADLINES) });
    cleanup.push(() => pool.end());
    expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
    const connects = proxy.counts.upstreamConnects;
    proxy.blackhole();
    const err = await pool.query('SELECT 2').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeadlineExceeded);
    expect(isStoreUnavailable(err)).toBe(true);
    expect(destroyed).toBe(1);
    expect(pool.totalCount).toBe(0); // never returned to the pool
    proxy.pass();
    expect((await pool.query('SELECT 3 AS three')).rows[0]).toEqual({ three: 3 });
    expect(proxy.counts.upstreamConnects).toBe(connects + 1);
  });

  it('the database ends a statement past statement_timeout itself: 503-class error, the connection stays usable', async () => {
    const { url } = await throughProxy();
    const pool = new pg.Pool({ connectionString: url, max: 1, ...sessionSettings(DEADLINES) });
    cleanup.push(() => pool.end());
    const slow = await pool.query('SELECT pg_sleep(2)').catch((e: unknown) => e);
    expect((slow as { code?: string }).code).toBe('57014');
    expect(isStoreUnavailable(slow)).toBe(true);
    expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
  });

  // Reads go to the pool; writes through the group commit, whose batch deadline (1.5 s) is
  // shorter than the query's (2 s): both paths must drop the idle connections to the old host.
  it.each([
    ['a read', 'the first query that missed its deadline', (store: PostgresStore, id: string) => store.read((tx) => tx.tenants.getEnvironment(id))],
    ['a write', 'the first group-committed batch that missed its deadline', (store: PostgresStore, id: string) => store.transaction((tx) => tx.tenants.getEnvironment(id))],
  ] as const)('after a fail-over to a silent old host, %s is served by the new one: the idle connections go with %s', async (_what, _first, call) => {
    const { proxy, url, upstreamPort } = await throughProxy();
    const store = await storeThrough(url);
    const { env } = await seedEnvironment(store);
    // Several idle connections to the old host.
    await Promise.all(Array.from({ length: 4 }, () => store.read((tx) => tx.tenants.getEnvironment(env.id))));
    proxy.retarget(upstreamPort, 'silent');
    const outcomes: unknown[] = [];
    for (let i = 0; i < 8; i++) outcomes.push(await call(store, env.id).catch((e: unknown) => e));
    const failed = outcomes.filter((o) => o instanceof Error);
    // Only the call that met the silent host fails; without the eviction the next one took
    // another idle connection to it and failed too.
    expect(failed.map((e) => `${(e as Error).name}: ${(e as Error).message}`), `calls ${outcomes.map((o) => (o instanceof Error ? 'failed' : 'ok')).join(' ')}`).toHaveLength(1);
    expect(isStoreUnavailable(failed[0])).toBe(true);
    // The caller hears the deadline, not what a rollback on the dead connection said after it.
    expect(failed[0]).toBeInstanceOf(DeadlineExceeded);
    expect(outcomes.slice(1)).toEqual(Array.from({ length: 7 }, () => expect.objectContaining({ id: env.id })));
    expect(store.connectionStats().destroyed).toBeGreaterThanOrEqual(1);
  });

  // After the unit's error, its savepoint is rolled back on a connection the deadline destroyed:
  // that fails with pg's "not queryable", which used to be the caller's error.
  it('a transaction whose host goes silent inside it fails by the batch deadline, and says so', async () => {
    const { proxy, url } = await throughProxy();
    const store = await storeThrough(url);
    const { env } = await seedEnvironment(store);
    const err = await store
      .transaction(async (tx) => {
        await tx.tenants.getEnvironment(env.id);
        proxy.blackhole();
        return tx.tenants.getEnvironment(env.id);
      })
      .catch((e: unknown) => e);
    proxy.pass();
    expect(err).toBeInstanceOf(DeadlineExceeded);
    expect((err as Error).message).toContain(`within ${DEADLINES.transactionMs} ms`);
    expect(isStoreUnavailable(err)).toBe(true);
    expect((await store.read((tx) => tx.tenants.getEnvironment(env.id)))?.id).toBe(env.id);
  });

  it("a guarded write whose host goes silent fails by its query deadline, not with the rollback's error on the dead connection", async () => {
    const { proxy, url } = await throughProxy();
    const pool = new pg.Pool({ connectionString: url, max: 1, Client: deadlineClient(realTimers, 400, () => undefined), ...sessionSettings(DEADLINES) });
    cleanup.push(() => pool.end());
    const client = await pool.connect();
    cleanup.push(async () => client.release(true));
    await client.query('BEGIN');
    const conn = new Conn(client);
    const err = await conn
      .guarded(async () => {
        proxy.blackhole(); // after the SAVEPOINT's answer: the write itself meets the silence
        return conn.run('SELECT 1');
      })
      .catch((e: unknown) => e);
    proxy.pass();
    expect(err).toBeInstanceOf(DeadlineExceeded);
  });

  it('a COMMIT whose answer is cut answers OutcomeUnknown; the write did go in, and the same thirdPartyId finds it', async () => {
    const { proxy, url } = await throughProxy();
    const store = await storeThrough(url);
    const { env } = await seedEnvironment(store);
    const payout = payoutRecord(env);
    proxy.cutCommits(1);
    const err = await store.transaction((tx) => tx.transactions.insert(payout)).catch((e: unknown) => e);
    proxy.cutCommits(0);
    expect(err).toBeInstanceOf(OutcomeUnknown);
    expect(isStoreUnavailable(err)).toBe(false);
    const found = await store.read((tx) => tx.transactions.get(env.id, payout.id));
    expect(found?.id).toBe(payout.id);
  });

  it("a claim whose COMMIT is cut gives its leases back once the database answers: the delivery is claimed again at once, not after its lease", async () => {
    const { proxy, url } = await throughProxy();
    const store = await storeThrough(url);
    const { env } = await seedEnvironment(store);
    const { ep, event } = await seedEndpointAndEvent(store, env);
    const d = deliveryRecord(event, ep, { nextAttemptAt: T0 });
    await store.transaction((tx) => tx.deliveries.insert(d));
    const claim = (owner: string) => store.queue.claim({ owner, now: T0, leaseMs: 3_600_000, limit: 10, perEndpointLimit: 10 });
    let woken = 0;
    store.onDeliveriesReady(() => woken++);
    proxy.cutCommits(1);
    expect(await claim('worker-a').catch((e: unknown) => e)).toBeInstanceOf(Error);
    proxy.cutCommits(0);
    await until(() => woken > 0, 'woken > 0', 10_000);
    expect((await claim('worker-b')).map((c) => c.delivery.id)).toEqual([d.id]);
  });

  it('admission control: with the database silent, calls beyond maxQueued are refused at once, and every call is answered', async () => {
    const { proxy, url } = await throughProxy();
    const store = await storeThrough(url, { maxQueued: 4 });
    const { env } = await seedEnvironment(store);
    proxy.blackhole();
    const calls = Array.from({ length: 20 }, () => store.transaction((tx) => tx.tenants.getEnvironment(env.id)).then(() => 'ok', (e: unknown) => e));
    const results = await Promise.all(calls);
    proxy.pass();
    const refused = results.filter((r) => (r as { code?: string }).code === 'EOVERLOADED');
    // The calls are made in one turn: the first four fill the queue before any batch takes one,
    // so exactly the other sixteen are refused, each at once.
    expect(refused.length).toBe(20 - 4);
    for (const r of results) expect(r === 'ok' || isStoreUnavailable(r) || r instanceof OutcomeUnknown).toBe(true);
    expect(store.connectionStats().refused).toBeGreaterThanOrEqual(refused.length);
  });

  it('close() ends even when the database never answers again', async () => {
    const { proxy, url } = await throughProxy();
    const store = await openPostgresStore({ connectionString: url, poolSize: 4, log: pino({ level: 'silent' }), deadlines: DEADLINES });
    await store.migrate();
    proxy.blackhole();
    const pending = store.read((tx) => tx.tenants.getEnvironment('x')).catch((e: unknown) => e);
    await store.close();
    expect(isStoreUnavailable(await pending)).toBe(true);
  });
});
