import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { describePostgresSuite, suiteFilesGaps } from './testing/suite-files.ts';
import { T0, attempt, deliveryRecord, endpointRecord, eventRecord, paymentRecord, payoutRecord, seedEndpointAndEvent, seedEnvironment, sleep } from '../suite/fixtures.ts';
import type { DeliveryRecord } from '../../domain/model.ts';
import { UniqueViolation, type Store } from '../../domain/store.ts';
import { loadMigrations, migrate } from './migrate.ts';
import { openPostgresStore, type PostgresStore } from './store.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';
import { HEARTBEAT_MS } from './versions.ts';
import { FakeTimers } from '../../delivery/testing.ts';
import { until } from '../../../testing/until.ts';

// The store suite's groups of records (the rest: postgres-queue.test.ts), then this store's own cases.
describePostgresSuite('records');

it('the PostgreSQL suite files run every group of the store suite once', () => {
  expect(suiteFilesGaps()).toEqual([]);
});

/** An environment with an endpoint, an event and one pending delivery of it. */
async function oneDelivery(store: Store): Promise<{ d: DeliveryRecord }> {
  const { env } = await seedEnvironment(store);
  const { ep, event } = await seedEndpointAndEvent(store, env);
  const d = deliveryRecord(event, ep);
  await store.transaction((tx) => tx.deliveries.insert(d));
  return { d };
}

describe('PostgreSQL store', () => {
  const databases: TestDatabase[] = [];
  const stores: PostgresStore[] = [];
  const pools: pg.Pool[] = [];

  const database = async (): Promise<TestDatabase> => {
    const db = await createTestDatabase();
    databases.push(db);
    return db;
  };
  const open = async (url: string, poolSize = 10, transactionsStalenessMs?: number, deadlines?: { statementMs: number; transactionMs: number }): Promise<PostgresStore> => {
    // Silent: some cases kill connections and cause deadlocks on purpose.
    const bounds = transactionsStalenessMs !== undefined ? { transactionsStalenessMs, transactionsMaxAgeMs: Infinity } : {};
    const store = await openPostgresStore({ connectionString: url, poolSize, log: pino({ level: 'silent' }), ...bounds, ...(deadlines ? { deadlines } : {}) });
    stores.push(store);
    return store;
  };
  const rawPool = (url: string): pg.Pool => {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    // Connections still closing when the database is dropped report an error: expected.
    pool.on('error', () => undefined);
    pools.push(pool);
    return pool;
  };
  /** Two instances (two stores, two pools) over one migrated database. */
  const twoInstances = async (): Promise<[PostgresStore, PostgresStore, string]> => {
    const { url } = await database();
    const a = await open(url);
    const b = await open(url);
    await a.migrate();
    await b.migrate();
    return [a, b, url];
  };

  it('instances take order numbers in blocks: never the same number, consecutive within an instance', async () => {
    const [a, b] = await twoInstances();
    const { env } = await seedEnvironment(a);
    const next = (store: Store) => store.transaction((tx) => tx.orders.nextOrderNumber(env.id));
    const fromA = await Promise.all(Array.from({ length: 5 }, () => next(a)));
    const fromB = await Promise.all(Array.from({ length: 5 }, () => next(b)));
    expect([...fromA].sort()).toEqual(['ORD-000001', 'ORD-000002', 'ORD-000003', 'ORD-000004', 'ORD-000005']);
    // b reserved the block after a's: its numbers start past a's whole block.
    expect([...fromB].sort()).toEqual(['ORD-000101', 'ORD-000102', 'ORD-000103', 'ORD-000104', 'ORD-000105']);
    // A rolled-back order does not give its number back: the next one moves on.
    await expect(
      a.transaction(async (tx) => {
        await tx.orders.nextOrderNumber(env.id);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await next(a)).toBe('ORD-000007');
  });

  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const p of pools.splice(0)) await p.end();
    for (const d of databases.splice(0)) await d.drop();
  });

  it('two instances migrating one fresh database together both succeed, and each migration is applied once', async () => {
    const { url } = await database();
    const [a, b] = [await open(url), await open(url)];
    await Promise.all([a.migrate(), b.migrate(), a.migrate()]);
    const rows = (await rawPool(url).query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows;
    expect(rows).toEqual(loadMigrations().map((m) => ({ version: m.version })));
    // Both see the same schema and can work on it at once.
    const { env } = await seedEnvironment(a, { walletBalance: '10' });
    expect(await b.transaction((tx) => tx.tenants.getEnvironment(env.id))).toEqual(env);
  });

  it('the migration lock lets exactly one of several concurrent migrators apply the migrations', async () => {
    const { url } = await database();
    const results = await Promise.all([rawPool(url), rawPool(url), rawPool(url)].map((pool) => migrate(pool)));
    const all = loadMigrations().map((m) => m.version);
    expect(results.filter((r) => r.length > 0)).toEqual([all]);
    expect(results.filter((r) => r.length === 0)).toHaveLength(2);
  });

  it('0003 makes amount optional and clears the base units older payments of orders kept in it', async () => {
    const { url } = await database();
    await migrate(rawPool(url), loadMigrations().filter((m) => m.version < 3));
    const store = await open(url);
    const { env } = await seedEnvironment(store);
    const payout = payoutRecord(env, { amount: '1234567.12345678' });
    const old = paymentRecord(env, { amount: '49990000', amountBaseUnits: '49990000' });
    const unlinked = paymentRecord(env, { orderId: null, orderNumber: null, userId: 'user-7', amount: '75.5', amountBaseUnits: null });
    await store.transaction(async (tx) => {
      for (const t of [payout, old, unlinked]) await tx.transactions.insert(t);
    });
    await store.migrate();
    await store.transaction(async (tx) => {
      expect(await tx.transactions.get(env.id, payout.id)).toEqual(payout);
      expect(await tx.transactions.get(env.id, unlinked.id)).toEqual(unlinked);
      expect(await tx.transactions.get(env.id, old.id)).toEqual({ ...old, amount: null });
      const wei = paymentRecord(env, { amount: null, amountBaseUnits: '1234567890123456789' });
      await tx.transactions.insert(wei);
      expect(await tx.transactions.get(env.id, wei.id)).toEqual(wei);
    });
  });

  it('0005 moves leases out of the delivery rows, and the queue honours the ones it moved', async () => {
    const { url } = await database();
    const raw = rawPool(url);
    await migrate(raw, loadMigrations().filter((m) => m.version < 5));
    const store = await open(url);
    const { env } = await seedEnvironment(store);
    // Written as the schema of 0004 has it: without 0007's signature_scheme, which migrating adds as the default.
    const [ep, event] = [endpointRecord(env), eventRecord(env)];
    await raw.query(
      `INSERT INTO webhook_endpoints (id, environment_id, url, secret_enc, active, version, last_test_delivery_id, created_at, updated_at, disabled_at)
       VALUES ($1, $2, $3, $4, TRUE, $5, NULL, $6, $7, NULL)`,
      [ep.id, ep.environmentId, ep.url, ep.secretEnc, ep.version, ep.createdAt, ep.updatedAt],
    );
    // And the event without 0011's trace_context.
    await raw.query(
      `INSERT INTO events (id, environment_id, type, payload, order_id, merchant_reference, transaction_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [event.id, event.environmentId, event.type, event.payload, event.orderId, event.merchantReference, event.transactionId, event.createdAt],
    );
    const [leased, free] = [deliveryRecord(event, ep, { nextAttemptAt: T0 - 2000 }), deliveryRecord(event, ep, { nextAttemptAt: T0 - 1000 })] as const;
    await store.transaction(async (tx) => {
      for (const d of [leased, free]) await tx.deliveries.insert(d);
    });
    await raw.query('UPDATE deliveries SET lease_owner = $2, lease_expires_at = $3 WHERE id = $1', [leased.id, 'worker-a', T0 + 30_000]);
    await store.migrate();
    const get = (id: string) => store.transaction((tx) => tx.deliveries.get(env.id, id));
    expect(await get(leased.id)).toEqual({ ...leased, leaseOwner: 'worker-a', leaseExpiresAt: T0 + 30_000 });
    expect(await get(free.id)).toEqual(free);
    // Another worker takes only the free one; the lease holder still records its attempt.
    const claimed = await store.queue.claim({ owner: 'worker-b', now: T0, leaseMs: 30_000, limit: 10, perEndpointLimit: 10 });
    expect(claimed.map((c) => c.delivery.id)).toEqual([free.id]);
    const result = { attempt: attempt(leased.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 183 };
    expect((await store.queue.completeAndClaim('worker-a', [{ deliveryId: leased.id, leaseExpiresAt: T0 + 30_000, result }], null)).applied).toEqual([true]);
    expect(await get(leased.id)).toMatchObject({ state: 'delivered', leaseOwner: null, leaseExpiresAt: null });
    expect((await raw.query('SELECT owner FROM delivery_leases')).rows).toEqual([{ owner: 'worker-b' }]);
  });

  it('refuses a database that has a migration this code does not know', async () => {
    const { url } = await database();
    const store = await open(url);
    await store.migrate();
    await rawPool(url).query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [loadMigrations().length + 1, T0]);
    await expect(openPostgresStore({ connectionString: url })).rejects.toThrow(/newer version/);
    await expect(store.migrate()).rejects.toThrow(/newer version/);
  });

  it('stores the wallet as NUMERIC and debits it atomically across instances, never below zero', async () => {
    const [a, b, url] = await twoInstances();
    const { env } = await seedEnvironment(a, { walletBalance: '100' });
    const debits = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).transaction((tx) => tx.tenants.adjustWallet(env.id, '-10.00000001'))),
    );
    expect(debits.filter((r) => r !== null)).toHaveLength(9);
    expect(await a.transaction((tx) => tx.tenants.getEnvironment(env.id))).toMatchObject({ walletBalance: '9.99999991' });
    const column = await rawPool(url).query<{ data_type: string }>(
      "SELECT data_type FROM information_schema.columns WHERE table_name = 'environments' AND column_name = 'wallet_balance'",
    );
    expect(column.rows[0]?.data_type).toBe('numeric');
    // More places than the column keeps would be rounded silently: refused instead.
    await expect(a.transaction((tx) => tx.tenants.adjustWallet(env.id, '0.000000001'))).rejects.toThrow(RangeError);
  });

  it('a unique race on thirdPartyId across two instances: exactly one wins', async () => {
    const [a, b] = await twoInstances();
    const { env } = await seedEnvironment(a);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 ? a : b).transaction(async (tx) => {
          await tx.transactions.findByThirdPartyId(env.id, 'payout', 'withdrawal-88121');
          await sleep(10);
          await tx.transactions.insert(payoutRecord(env, { thirdPartyId: 'withdrawal-88121' }));
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') {
        expect(r.reason).toBeInstanceOf(UniqueViolation);
        expect((r.reason as UniqueViolation).constraint).toBe('third_party_id');
      }
    }
  });

  it('claims from two instances over 200 due deliveries never overlap and together get all', async () => {
    const [a, b, url] = await twoInstances();
    const { env } = await seedEnvironment(a);
    const { ep, event } = await seedEndpointAndEvent(a, env);
    const ds = Array.from({ length: 200 }, (_, i) =>
      deliveryRecord(event, i % 3 ? ep : null, { url: i % 3 ? ep.url : `https://api.northwind.example/callbacks/${i % 7}`, nextAttemptAt: T0 - i }),
    );
    await a.transaction(async (tx) => {
      for (const d of ds) await tx.deliveries.insert(d);
    });
    // Every claimer's first claim is made before any makes its second (a barrier), so the four
    // compete from the start whatever the machine's load: none drains the queue alone.
    const claimers = 4;
    let firstClaims = 0;
    let allClaimed = (): void => undefined;
    const barrier = new Promise<void>((resolve) => (allClaimed = resolve));
    const drain = async (store: Store, owner: string): Promise<string[]> => {
      const got: string[] = [];
      for (let round = 0; ; round += 1) {
        const batch = await store.queue.claim({ owner, now: T0, leaseMs: 60_000, limit: 9, perEndpointLimit: 1000 });
        got.push(...batch.map((c) => c.delivery.id));
        if (round === 0) {
          if ((firstClaims += 1) === claimers) allClaimed();
          await barrier;
        }
        if (batch.length === 0) return got;
      }
    };
    const [fromA, fromB, fromA2, fromB2] = await Promise.all([drain(a, 'a-1'), drain(b, 'b-1'), drain(a, 'a-2'), drain(b, 'b-2')]);
    const all = [...fromA, ...fromB, ...fromA2, ...fromB2];
    expect(all).toHaveLength(200);
    expect(new Set(all)).toEqual(new Set(ds.map((d) => d.id)));
    expect([fromA, fromB, fromA2, fromB2].map((got) => got.length > 0)).toEqual([true, true, true, true]);
    // The database agrees about who holds what.
    const owners = await rawPool(url).query<{ id: string; lease_owner: string }>('SELECT d.id, l.owner AS lease_owner FROM deliveries d JOIN delivery_leases l ON l.delivery_seq = d.seq');
    const byId = new Map(owners.rows.map((r) => [r.id, r.lease_owner]));
    for (const id of fromA) expect(byId.get(id)).toBe('a-1');
    for (const id of fromB2) expect(byId.get(id)).toBe('b-2');
  });

  it('perEndpointLimit holds across instances claiming at the same time', async () => {
    const [a, b] = await twoInstances();
    const { env } = await seedEnvironment(a);
    const { ep, event } = await seedEndpointAndEvent(a, env);
    await a.transaction(async (tx) => {
      for (let i = 0; i < 30; i++) await tx.deliveries.insert(deliveryRecord(event, ep, { nextAttemptAt: T0 - i }));
    });
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).queue.claim({ owner: `w-${i}`, now: T0, leaseMs: 60_000, limit: 10, perEndpointLimit: 3 })),
    );
    expect(claims.flat()).toHaveLength(3);
  });

  it('a late complete from an owner whose lease expired is refused once another instance reclaimed it', async () => {
    const [a, b] = await twoInstances();
    const { d } = await oneDelivery(a);
    expect(await a.queue.claim({ owner: 'a', now: T0, leaseMs: 1000, limit: 5, perEndpointLimit: 5 })).toHaveLength(1);
    expect(await b.queue.claim({ owner: 'b', now: T0 + 1000, leaseMs: 1000, limit: 5, perEndpointLimit: 5 })).toHaveLength(1);
    const result = { attempt: attempt(d.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 183 };
    const [late, owner] = await Promise.all([
      a.queue.completeAndClaim('a', [{ deliveryId: d.id, leaseExpiresAt: T0 + 1000, result }], null),
      b.queue.completeAndClaim('b', [{ deliveryId: d.id, leaseExpiresAt: T0 + 2000, result }], null),
    ]);
    expect([late.applied, owner.applied]).toEqual([[false], [true]]);
    expect(await a.transaction((tx) => tx.deliveries.attempts(d.id))).toEqual([result.attempt]);
  });

  it('the event stream never skips an event that another instance commits after a later one was read', async () => {
    const [a, b] = await twoInstances();
    const { env } = await seedEnvironment(a);
    const head = await a.read((tx) => tx.events.streamHead(env.id));
    const first = eventRecord(env, { createdAt: T0 });
    const second = eventRecord(env, { createdAt: T0 + 1 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted = false;
    // Instance a writes the first event (the lower seq) and keeps its transaction open…
    const slow = a.transaction(async (tx) => {
      await tx.events.insert(first);
      inserted = true;
      await held;
    });
    await until(() => inserted, 'inserted');
    // …while instance b commits the second one, which a reader would see first by seq alone.
    await b.transaction((tx) => tx.events.insert(second));
    let cursor = head;
    const seen: string[] = [];
    const drain = async (): Promise<void> => {
      const items = await b.read((tx) => tx.events.streamAfter(env.id, { cursor, types: [], limit: 100 }));
      seen.push(...items.map((i) => i.event.id));
      cursor = items.at(-1)?.cursor ?? cursor;
    };
    await drain();
    // Held back behind the open transaction: nothing is answered that the first could precede.
    expect(seen).toEqual([]);
    release();
    await slow;
    await until(async () => { await drain(); return seen.length >= 2; }, 'seen.length >= 2', 15_000);
    expect(seen).toEqual([first.id, second.id]);
  });

  it('a stream opened while an older transaction runs replays nothing committed before it, and loses nothing after', async () => {
    const [a, b] = await twoInstances();
    const { env } = await seedEnvironment(a);
    const [old, before, after] = [0, 1, 2].map((i) => eventRecord(env, { createdAt: T0 + i }));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted = false;
    // An older transaction holds the snapshot's xmin back…
    const slow = a.transaction(async (tx) => {
      await tx.events.insert(old!);
      inserted = true;
      await held;
    });
    await until(() => inserted, 'inserted');
    // …while a later one commits before the stream opens: it is behind "now", though above xmin.
    await b.transaction((tx) => tx.events.insert(before!));
    const head = await b.read((tx) => tx.events.streamHead(env.id));
    await b.transaction((tx) => tx.events.insert(after!));
    release();
    await slow;
    let cursor = head;
    const seen: string[] = [];
    // One event at a time: every cursor handed out must keep what the opening had seen.
    const next = async (): Promise<void> => {
      const items = await b.read((tx) => tx.events.streamAfter(env.id, { cursor, types: [], limit: 1 }));
      seen.push(...items.map((x) => x.event.id));
      cursor = items.at(-1)?.cursor ?? cursor;
    };
    await until(async () => { await next(); return seen.length >= 2; }, 'seen.length >= 2', 15_000);
    expect(seen).toEqual([old!.id, after!.id]);
    // The cursors are still ones this store accepts when given back.
    await expect(b.read((tx) => tx.events.streamAfter(env.id, { cursor, types: [], limit: 1 }))).resolves.toEqual([]);
  });

  it('a commit on one instance wakes the listeners of another; a rollback does not', async () => {
    const [a, b] = await twoInstances();
    const { env } = await seedEnvironment(a);
    const { ep, event } = await seedEndpointAndEvent(a, env);
    let woken = 0;
    let ownWakes = 0;
    b.onDeliveriesReady(() => woken++);
    a.onDeliveriesReady(() => ownWakes++);

    await expect(
      a.transaction(async (tx) => {
        await tx.deliveries.insert(deliveryRecord(event, ep));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');

    // Notifications reach every listener in commit order: once b has heard this commit, it
    // would have heard anything the rollback had sent before it.
    await a.transaction((tx) => tx.deliveries.insert(deliveryRecord(event, ep)));
    await until(() => woken >= 1, 'b woken by the commit');
    expect(woken).toBe(1);
    expect(ownWakes).toBe(1); // the committing instance is woken once, directly
    // ...and skips the echo of its own NOTIFY: a commit on b, which a hears after that echo.
    await b.transaction((tx) => tx.deliveries.insert(deliveryRecord(event, ep)));
    await until(() => ownWakes >= 2, "a woken by b's commit");
    expect(ownWakes).toBe(2);

    // Giving leases back wakes the other instances too.
    expect(await a.queue.claim({ owner: 'a', now: T0, leaseMs: 60_000, limit: 5, perEndpointLimit: 5 })).toHaveLength(2);
    const claimed = await a.transaction((tx) => tx.deliveries.list(env.id, { q: null, limit: 5, cursor: null }));
    await a.queue.release('a', claimed.items.map((d) => d.id));
    await until(() => woken >= 3, 'b woken by the release');
    expect(woken).toBe(3); // b's own commit woke it once, directly: it skipped its echo too
  });

  it('the listener reconnects when its connection is killed, and wakes its listeners when back', async () => {
    const [a, b, url] = await twoInstances();
    const { env } = await seedEnvironment(a);
    const { ep, event } = await seedEndpointAndEvent(a, env);
    let woken = 0;
    b.onDeliveriesReady(() => woken++);
    const killed = await rawPool(url).query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'payments-service:listener'",
    );
    expect(killed.rowCount).toBe(2);
    // Back after the first back-off: both wake once (notifications may have been missed).
    await until(() => woken >= 1, 'woken >= 1', 5000);
    const before = woken;
    await a.transaction((tx) => tx.deliveries.insert(deliveryRecord(event, ep)));
    await until(() => woken > before, 'woken > before', 5000);
  });

  it("the delivery watchdog's reset drops the queue's idle connections and leaves a healthy listener alone", async () => {
    const { url } = await database();
    const store = await open(url);
    await store.migrate();
    await store.queue.nextDueAt(); // a queue connection, idle once answered
    const raw = rawPool(url);
    const pids = async (application: string): Promise<number[]> =>
      (await raw.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [application])).rows.map((r) => r.pid);
    const listener = await pids('payments-service:listener');
    const queue = await pids('payments-service:queue');
    expect(listener).toHaveLength(1);
    expect(queue.length).toBeGreaterThan(0);
    store.queue.reset!();
    await until(async () => (await pids('payments-service:queue')).every((pid) => !queue.includes(pid)), 'the idle queue connections to be dropped');
    expect(store.connectionStats().listening).toBe(true);
    expect(await pids('payments-service:listener')).toEqual(listener);
  });

  // A bound no loaded test machine exceeds: null then means "never heard", not "slow".
  const LONG_BOUND_MS = 600_000;

  it('transactionsVersion: another instance\'s write moves this one\'s version once it has caught up, only for that environment', async () => {
    const { url } = await database();
    const a = await open(url, 4, LONG_BOUND_MS);
    const b = await open(url, 4, LONG_BOUND_MS);
    await a.migrate();
    const { env } = await seedEnvironment(a, { walletBalance: '100' });
    const other = (await seedEnvironment(a)).env;
    await b.transactionsCaughtUp();
    const v0 = b.transactionsVersion(env.id);
    const o0 = b.transactionsVersion(other.id);
    expect(v0).not.toBeNull();
    // Moved on the writer's instance before the writer hears back, and on b once it caught up.
    const own = a.transactionsVersion(env.id);
    await a.transaction((tx) => tx.transactions.insertAndAdjustWallet(payoutRecord(env), '-1'));
    expect(a.transactionsVersion(env.id)).not.toBe(own);
    await b.transactionsCaughtUp();
    const v1 = b.transactionsVersion(env.id);
    expect(v1).not.toBe(v0);
    expect(b.transactionsVersion(other.id)).toBe(o0);
    // Writes that change no transaction (a wallet alone, a rollback) move nothing.
    await a.transaction((tx) => tx.tenants.adjustWallet(env.id, '-1'));
    await expect(
      a.transaction(async (tx) => {
        await tx.transactions.insert(payoutRecord(env));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await b.transactionsCaughtUp();
    expect(b.transactionsVersion(env.id)).toBe(v1);
  });

  it('transactionsVersion is null while the listener is away, and moves for every environment once it is back', async () => {
    const { url } = await database();
    const a = await open(url, 4, LONG_BOUND_MS);
    await a.migrate();
    const { env } = await seedEnvironment(a);
    await a.transactionsCaughtUp();
    const before = a.transactionsVersion(env.id);
    expect(before).not.toBeNull();
    await rawPool(url).query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'payments-service:listener'");
    // Notifications sent while it was away are lost: no version until it is back, then a new one.
    await until(() => a.transactionsVersion(env.id) === null, 'a.transactionsVersion(env.id) === null', 5000);
    await a.transactionsCaughtUp();
    const after = a.transactionsVersion(env.id);
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
  });

  it('transactionsVersion with the default bound: a version while heartbeats come back', async () => {
    const { url } = await database();
    const a = await open(url, 4);
    await a.transactionsCaughtUp();
    // The heartbeat just came back: well inside the bound (an event loop stalled for 100 ms would fail this).
    expect(a.transactionsVersion('env_x')).not.toBeNull();
  });

  it('waits for its heartbeats with the timers it is given, the next one set when one goes out', async () => {
    const { url } = await database();
    const timers = new FakeTimers();
    const a = await openPostgresStore({ connectionString: url, poolSize: 4, log: pino({ level: 'silent' }), transactionsStalenessMs: Infinity, timers });
    stores.push(a);
    expect(timers.delays()).toEqual([HEARTBEAT_MS]);
    const caughtUp = a.transactionsCaughtUp();
    timers.fireAll();
    await caughtUp;
    expect(timers.delays()).toEqual([HEARTBEAT_MS]);
  });

  it('runs a transaction again after a deadlock, and both transactions commit', async () => {
    // The lock waits must outlast PostgreSQL's deadlock detector (deadlock_timeout, 1 s), which
    // a starved machine runs late: with the default 2 s statement timeout a CI run saw the
    // timeout first, which is not retried.
    const { url } = await database();
    const slow = { statementMs: 20_000, transactionMs: 30_000 };
    const a = await open(url, 10, undefined, slow);
    const b = await open(url, 10, undefined, slow);
    await a.migrate();
    await b.migrate();
    const x = (await seedEnvironment(a, { walletBalance: '10' })).env;
    const y = (await seedEnvironment(a, { walletBalance: '10' })).env;
    let runs = 0;
    // Each takes its second lock only once both hold their first: a deadlock every time. The
    // victim's second run finds the barrier open.
    let holding = 0;
    let bothHold!: () => void;
    const barrier = new Promise<void>((resolve) => (bothHold = resolve));
    const crossing = (store: Store, first: string, second: string) =>
      store.transaction(async (tx) => {
        runs++;
        await tx.tenants.adjustWallet(first, '1');
        if (++holding === 2) bothHold();
        await barrier;
        await tx.tenants.adjustWallet(second, '1');
      });
    await Promise.all([crossing(a, x.id, y.id), crossing(b, y.id, x.id)]);
    expect(runs).toBe(3);
    expect((await a.transaction((tx) => tx.tenants.getEnvironment(x.id)))?.walletBalance).toBe('12');
    expect((await a.transaction((tx) => tx.tenants.getEnvironment(y.id)))?.walletBalance).toBe('12');
  });

  it('refuses to report a commit when a database error was caught inside the transaction', async () => {
    const [a] = await twoInstances();
    const { env } = await seedEnvironment(a);
    const payout = payoutRecord(env);
    await expect(
      a.transaction(async (tx) => {
        await tx.transactions.insert(payout);
        // A database error outside a guarded write (here a time that is not a bigint) aborts
        // the PostgreSQL transaction, even when the caller catches it.
        await tx.transactions.updateStatus(env.id, payout.id, 'pending', 'completed', Number.NaN).catch(() => undefined);
      }),
    ).rejects.toThrow(/rolled back/);
    expect(await a.transaction((tx) => tx.transactions.get(env.id, payout.id))).toBeNull();
  });

  it('keeps response bodies with NUL characters instead of failing the attempt', async () => {
    const [a] = await twoInstances();
    const { d } = await oneDelivery(a);
    await a.queue.claim({ owner: 'a', now: T0, leaseMs: 60_000, limit: 5, perEndpointLimit: 5 });
    const result = { attempt: attempt(d.id, { responseBody: 'ok\u0000tail' }), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 183 };
    expect((await a.queue.completeAndClaim('a', [{ deliveryId: d.id, leaseExpiresAt: T0 + 60_000, result }], null)).applied).toEqual([true]);
    expect((await a.transaction((tx) => tx.deliveries.attempts(d.id)))[0]?.responseBody).toBe('ok\uFFFDtail');
  });

  it('serialises the calls of one transaction, even when they are not awaited one by one', async () => {
    const [store] = await twoInstances();
    const { env } = await seedEnvironment(store);
    const first = payoutRecord(env, { thirdPartyId: 'withdrawal-1' });
    const clash = payoutRecord(env, { thirdPartyId: 'withdrawal-1' });
    const last = payoutRecord(env, { thirdPartyId: 'withdrawal-2' });
    await store.transaction(async (tx) => {
      const results = await Promise.allSettled([tx.transactions.insert(first), tx.transactions.insert(clash), tx.transactions.insert(last)]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    });
    const ids = (await store.transaction((tx) => tx.transactions.listByUser(env.id, first.userId!, { limit: 10, cursor: null }))).items.map((t) => t.id);
    expect(ids.sort()).toEqual([first.id, last.id].sort());
  });
});
