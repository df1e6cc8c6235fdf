import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { describeStoreSuite } from '../suite/store-suite.ts';
import { T0, attempt, deliveryRecord, endpointRecord, eventRecord, paymentRecord, payoutRecord, seedEnvironment } from '../suite/fixtures.ts';
import { loadMigrations, migrate } from './migrate.ts';
import { openSqliteStore, type SqliteStore } from './store.ts';
import { transactionEndingStore } from './testing.ts';
import { until } from '../../../testing/until.ts';

const dir = mkdtempSync(join(tmpdir(), 'store-sqlite-'));
let files = 0;
const freshFile = (): string => join(dir, `store-${++files}.sqlite`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const suiteFiles = new WeakMap<object, string>();
describeStoreSuite(
  'sqlite (file)',
  async (o) => {
    const file = freshFile();
    const store = await openSqliteStore({ file, ...o });
    suiteFiles.set(store, file);
    return store;
  },
  (store) => openSqliteStore({ file: suiteFiles.get(store) ?? '' }),
);

describe('SQLite store', () => {
  const opened: SqliteStore[] = [];
  const open = async (file = freshFile()): Promise<SqliteStore> => {
    const store = await openSqliteStore({ file });
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });

  it('runs with WAL, the log synced after every commit, foreign keys on and savepoint journals in memory', async () => {
    const store = await open();
    await store.migrate();
    expect(store.pragma('journal_mode')).toBe('wal');
    // NORMAL: COMMIT itself does not sync; the group committer fdatasyncs the -wal file
    // before answering (group-commit.test.ts), which is what FULL would do inside COMMIT.
    expect(store.pragma('synchronous')).toBe(1);
    expect(store.pragma('foreign_keys')).toBe(1);
    // MEMORY: a unit's savepoint journal never spills to a temporary file (store.ts).
    expect(store.pragma('temp_store')).toBe(2);
    await expect(
      store.transaction((tx) =>
        tx.tenants.insertEnvironment({ id: 'env_orphan', tenantId: 'ten_missing', name: 'test', walletBalance: '0', callbackSecretEnc: 'x', createdAt: T0 }),
      ),
    ).rejects.toThrow(/FOREIGN KEY/);
  });

  it('keeps committed data across close and reopen', async () => {
    const file = freshFile();
    const first = await open(file);
    await first.migrate();
    const { env } = await seedEnvironment(first, { walletBalance: '10' });
    const payout = payoutRecord(env);
    await first.transaction(async (tx) => {
      await tx.transactions.insert(payout);
      await tx.tenants.adjustWallet(env.id, '-2.5');
    });
    await first.close();
    const second = await open(file);
    await second.migrate();
    await second.transaction(async (tx) => {
      expect(await tx.transactions.get(env.id, payout.id)).toEqual(payout);
      expect((await tx.tenants.getEnvironment(env.id))?.walletBalance).toBe('7.5');
    });
  });

  it('0004 rebuilds transactions with an optional amount, keeping every row, its rowid and the indexes', async () => {
    const file = freshFile();
    const raw = new Database(file);
    migrate(raw, loadMigrations().filter((m) => m.version < 4));
    raw.close();
    const store = await open(file);
    const { env } = await seedEnvironment(store);
    // Same created_at: the newest-first listing breaks the tie by rowid, which must survive.
    const first = payoutRecord(env, { userId: 'user-1', amount: '1234567.12345678' });
    const second = payoutRecord(env, { userId: 'user-1', amount: '2' });
    const old = paymentRecord(env, { amount: '49990000', amountBaseUnits: '49990000' });
    await store.transaction(async (tx) => {
      for (const t of [first, second, old]) await tx.transactions.insert(t);
    });
    await store.migrate();
    await store.transaction(async (tx) => {
      expect((await tx.transactions.listByUser(env.id, 'user-1', { limit: 10, cursor: null })).items).toEqual([second, first]);
      expect(await tx.transactions.get(env.id, old.id)).toEqual({ ...old, amount: null });
      const wei = paymentRecord(env, { amount: null, amountBaseUnits: '1234567890123456789' });
      await tx.transactions.insert(wei);
      expect(await tx.transactions.get(env.id, wei.id)).toEqual(wei);
    });
    const reader = new Database(file, { readonly: true });
    const indexes = reader.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'transactions' AND sql IS NOT NULL ORDER BY name").all();
    reader.close();
    expect(indexes).toEqual(['transactions_order', 'transactions_order_number', 'transactions_tx_hash', 'transactions_user'].map((name) => ({ name })));
  });

  it('0006 moves leases out of the delivery rows, keeping every row, its seq and its attempts, and the queue honours the moved leases', async () => {
    const file = freshFile();
    const raw = new Database(file);
    migrate(raw, loadMigrations().filter((m) => m.version < 6));
    const store = await open(file);
    const { env } = await seedEnvironment(store);
    // Written as the schema of 0005 has it: without 0007's signature_scheme, which migrating adds as the default.
    const [ep, event] = [endpointRecord(env), eventRecord(env)];
    raw.prepare(`INSERT INTO webhook_endpoints (id, environment_id, url, secret_enc, active, version, last_test_delivery_id, created_at, updated_at, disabled_at)
                 VALUES (?, ?, ?, ?, 1, ?, NULL, ?, ?, NULL)`).run(ep.id, ep.environmentId, ep.url, ep.secretEnc, ep.version, ep.createdAt, ep.updatedAt);
    // And the event without 0011's trace_context.
    raw.prepare(`INSERT INTO events (id, environment_id, type, payload, order_id, merchant_reference, transaction_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(event.id, event.environmentId, event.type, event.payload, event.orderId, event.merchantReference, event.transactionId, event.createdAt);
    const [leased, free, done] = [T0 - 2000, T0 - 1000, T0 - 3000].map((at) => deliveryRecord(event, ep, { nextAttemptAt: at }));
    await store.transaction(async (tx) => {
      for (const d of [leased!, free!, done!]) await tx.deliveries.insert(d);
    });
    raw.prepare('UPDATE deliveries SET lease_owner = ?, lease_expires_at = ? WHERE id = ?').run('worker-a', T0 + 30_000, leased!.id);
    const before = attempt(done!.id);
    raw.prepare(`INSERT INTO delivery_attempts (delivery_id, cycle, number, started_at, duration_ms, signature_timestamp, outcome, status_code, error_class, response_body, success)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(done!.id, before.cycle, before.number, before.startedAt, before.durationMs, before.signatureTimestamp, before.outcome, before.statusCode, before.errorClass, before.responseBody, before.success ? 1 : 0);
    const seqs = raw.prepare('SELECT id, seq FROM deliveries ORDER BY seq').all();
    raw.close();
    await store.migrate();
    const get = (id: string) => store.transaction((tx) => tx.deliveries.get(env.id, id));
    expect(await get(leased!.id)).toEqual({ ...leased, leaseOwner: 'worker-a', leaseExpiresAt: T0 + 30_000 });
    expect(await get(free!.id)).toEqual(free);
    expect(await store.transaction((tx) => tx.deliveries.attempts(done!.id))).toEqual([before]);
    // Another worker takes only the unleased ones; the lease holder still records its attempt.
    const claimed = await store.queue.claim({ owner: 'worker-b', now: T0, leaseMs: 30_000, limit: 10, perEndpointLimit: 10 });
    expect(claimed.map((c) => c.delivery.id)).toEqual([done!.id, free!.id]);
    const result = { attempt: attempt(leased!.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 183 };
    expect((await store.queue.completeAndClaim('worker-a', [{ deliveryId: leased!.id, leaseExpiresAt: T0 + 30_000, result }], null)).applied).toEqual([true]);
    expect(await get(leased!.id)).toMatchObject({ state: 'delivered', leaseOwner: null, leaseExpiresAt: null });
    // Same seqs, and a new delivery's comes after them (the AUTOINCREMENT counter moved over).
    const later = deliveryRecord(event, ep);
    await store.transaction((tx) => tx.deliveries.insert(later));
    const reader = new Database(file, { readonly: true });
    const after = reader.prepare('SELECT id, seq FROM deliveries ORDER BY seq').all() as { id: string; seq: number }[];
    expect(reader.pragma('foreign_key_check')).toEqual([]);
    reader.close();
    expect(after.slice(0, 3)).toEqual(seqs);
    expect(after[3]).toEqual({ id: later.id, seq: 4 });
  });

  it('refuses a database that has a migration this code does not know', async () => {
    const file = freshFile();
    const store = await open(file);
    await store.migrate();
    await store.close();
    const raw = new Database(file);
    raw.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(loadMigrations().length + 1, T0);
    raw.close();
    await expect(openSqliteStore({ file })).rejects.toThrow(/newer version/);
  });

  it('records each migration once', async () => {
    const file = freshFile();
    const store = await open(file);
    await store.migrate();
    await store.migrate();
    await store.close();
    const raw = new Database(file, { readonly: true });
    const rows = raw.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
    raw.close();
    expect(rows).toEqual(loadMigrations().map((m) => ({ version: m.version })));
  });

  it('transactionsVersion moves when another process commits to the file (versions.test.ts: exactly when)', async () => {
    const file = freshFile();
    const store = await open(file);
    await store.migrate();
    const { env } = await seedEnvironment(store);
    const before = store.transactionsVersion(env.id);
    // Another process (the admin tool, a script) writes the file directly.
    const outsider = new Database(file);
    try {
      outsider.prepare('UPDATE environments SET name = name WHERE id = ?').run(env.id);
      await until(() => store.transactionsVersion(env.id) !== before, 'the version moved by the outside commit');
    } finally {
      outsider.close();
    }
  });

  it('works in memory', async () => {
    const store = await open(':memory:');
    await store.migrate();
    const { env } = await seedEnvironment(store);
    expect(await store.transaction((tx) => tx.orders.nextOrderNumber(env.id))).toBe('ORD-000001');
  });

  it('refuses the writes of a transaction that goes on after SQLite ended its batch\'s transaction: nothing commits on its own, and its caller hears the error', async () => {
    const { store, faults } = await transactionEndingStore(/^INSERT INTO events/);
    try {
      const { env } = await seedEnvironment(store);
      const endpoint = endpointRecord(env);
      faults.left = 1;
      const swallowed: unknown[] = [];
      const answer = store.transaction(async (tx) => {
        await tx.events.insert(eventRecord(env)).catch((err: unknown) => swallowed.push(err)); // a body that swallows the I/O error
        await tx.endpoints.insert(endpoint); // would run outside any transaction: committed at once
      });
      await expect(answer).rejects.toThrow("the batch's transaction has ended");
      expect(swallowed.map((e) => (e as { code?: string }).code)).toEqual(['SQLITE_IOERR']);
      expect(await store.read((tx) => tx.endpoints.get(env.id, endpoint.id))).toBeNull();
      // The next transaction runs in a batch of its own, as usual.
      await store.transaction((tx) => tx.endpoints.insert(endpoint));
      expect(await store.read((tx) => tx.endpoints.get(env.id, endpoint.id))).not.toBeNull();
    } finally {
      await store.close();
    }
  });
});
