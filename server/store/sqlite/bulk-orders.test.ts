// The batched order writes of the SQLite store (bulk-orders.ts): a batch's orders take a few
// statements for all of them, numbered in submission order, and a batch that fails falls back
// to one savepoint per order, so only the bad order's caller fails.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { OrderCreation } from '../../domain/store.ts';
import { isStoreUnavailable } from '../../domain/store-unavailable.ts';
import { endpointRecord, seedEnvironment, seedRoutedEndpoints } from '../suite/fixtures.ts';
import { fanOutDeliveryId } from '../fan-out.ts';
import { orderCreation } from '../suite/order-creation-cases.ts';
import { TxScope } from '../tx.ts';
import { sqliteBulkOrders } from './bulk-orders.ts';
import { Db } from './db.ts';
import { SqliteStore } from './store.ts';
import { statementRecordingStores, transactionEndingStore, writeHeads } from './testing.ts';

/** How many of the creations' orders, events and deliveries the store holds. */
async function storedCounts(store: SqliteStore, creations: readonly OrderCreation[]): Promise<{ orders: number; events: number; deliveries: number }> {
  const found = await store.read((tx) =>
    Promise.all(creations.map(async (c) => [await tx.orders.get(c.order.environmentId, c.order.id), await tx.events.get(c.order.environmentId, c.event.id), await tx.deliveries.get(c.order.environmentId, c.delivery.id)])),
  );
  const count = (i: number): number => found.filter((f) => f[i] !== null).length;
  return { orders: count(0), events: count(1), deliveries: count(2) };
}

describe('SQLite bulk orders', () => {
  const open = statementRecordingStores('store-bulk-orders');

  it('writes a batch of 20 orders with an endpoint in seven statements: BEGIN, the number, the endpoint, three inserts, COMMIT', async () => {
    const { store, statements } = await open();
    const { env } = await seedEnvironment(store);
    await store.transaction((tx) => tx.endpoints.insert(endpointRecord(env)));
    const creations = Array.from({ length: 20 }, () => orderCreation(env));
    statements.length = 0;
    const results = await Promise.all(creations.map((c) => store.createOrder(c)));
    expect(writeHeads(statements)).toEqual([
      'BEGIN IMMEDIATE',
      'INSERT INTO order_number_sequences',
      'SELECT id, version,',
      'INSERT INTO orders',
      'INSERT INTO events',
      'INSERT INTO deliveries',
      'COMMIT',
    ]);
    expect(store.committer.stats.bulkUnits).toBe(20);
    // Numbered in the order they were submitted, each with its delivery.
    expect(results.map((r) => (r.created ? r.order.orderNumber : null))).toEqual(creations.map((_, i) => `ORD-${String(i + 1).padStart(6, '0')}`));
    expect(results.every((r) => r.created && r.delivery)).toBe(true);
    const seqs = await store.read((tx) => tx.events.list(env.id, { limit: 50, cursor: null, types: [] }));
    expect(seqs.items.map((e) => e.id).reverse()).toEqual(creations.map((c) => c.event.id));
  });

  it('fans a batch out in the same seven statements: each order one delivery per active endpoint taking order.created', async () => {
    const { store, statements } = await open();
    const { env } = await seedEnvironment(store);
    const { targets } = await seedRoutedEndpoints(store, env);
    const creations = Array.from({ length: 10 }, () => orderCreation(env));
    statements.length = 0;
    const results = await Promise.all(creations.map((c) => store.createOrder(c)));
    expect(writeHeads(statements)).toHaveLength(7);
    expect(store.committer.stats.bulkUnits).toBe(10);
    expect(results.every((r) => r.created && r.delivery)).toBe(true);
    for (const c of creations) {
      const { items } = await store.read((tx) => tx.deliveries.list(env.id, { q: c.order.id, limit: 10, cursor: null }));
      expect([...items].sort((a, b) => (a.endpointId! < b.endpointId! ? -1 : 1))).toEqual(
        targets.map((ep, rank) => ({ ...c.delivery, id: fanOutDeliveryId(c.delivery.id, ep.id, rank + 1), endpointId: ep.id, endpointVersion: ep.version, url: ep.url })),
      );
    }
  });

  it('a batch whose bulk write fails runs each order alone: the bad one fails, the others are created', async () => {
    const { store } = await open();
    const { env } = await seedEnvironment(store);
    const good = Array.from({ length: 5 }, () => orderCreation(env));
    const bad = orderCreation(env);
    bad.order.amountMinor = -1; // the table's CHECK refuses it
    const settled = await Promise.allSettled([...good.slice(0, 2), bad, ...good.slice(2)].map((c) => store.createOrder(c)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(store.committer.stats.bulkUnits).toBe(0);
    const stored = await store.read((tx) => Promise.all([...good, bad].map((c) => tx.orders.get(env.id, c.order.id))));
    expect(stored.map((o) => o !== null)).toEqual([true, true, true, true, true, false]);
  });

  it('the same idempotency key twice in one batch: the first is created, the second writes nothing', async () => {
    const { store } = await open();
    const { env } = await seedEnvironment(store);
    const [a, b, c] = [orderCreation(env, 'k-1'), orderCreation(env, 'k-1'), orderCreation(env, 'k-2')];
    const results = await Promise.all([a, b, c].map((x) => store.createOrder(x)));
    expect(results.map((r) => r.created)).toEqual([true, false, true]);
    expect(store.committer.stats.bulkUnits).toBe(3);
    const again = await store.createOrder(orderCreation(env, 'k-2'));
    expect(again.created).toBe(false);
  });

  it('a bulk write that fails notes nothing on its orders\' scopes: no events announced, no deliveries woken for what it did not write', async () => {
    const raw = new Database(':memory:');
    const store = new SqliteStore(raw);
    try {
      await store.migrate();
      const { env } = await seedEnvironment(store);
      await store.transaction((tx) => tx.endpoints.insert(endpointRecord(env)));
      const bad = orderCreation(env);
      bad.order.amountMinor = -1; // the table's CHECK refuses the batch's orders insert
      const items = [orderCreation(env), bad].map((creation) => ({ creation, scope: new TxScope() }));
      raw.exec('BEGIN');
      expect(() => sqliteBulkOrders(new Db(raw)).run(items)).toThrow(/CHECK constraint failed/);
      raw.exec('ROLLBACK');
      expect(items.map(({ scope }) => [scope.eventEnvironments, scope.deliveriesReady])).toEqual([
        [null, false],
        [null, false],
      ]);
    } finally {
      await store.close();
    }
  });

  describe('an error that ends the whole transaction (an I/O error) in a batch of orders', () => {
    /** Six orders with an endpoint, submitted together, on a store whose order inserts fail `faults` times; what their callers heard. */
    async function batchOfSix(faults: number, code?: 'SQLITE_IOERR' | 'SQLITE_NOMEM') {
      const { store, faults: armed } = await transactionEndingStore(/^INSERT INTO orders/, code);
      const { env } = await seedEnvironment(store);
      await store.transaction((tx) => tx.endpoints.insert(endpointRecord(env)));
      const heard = { events: 0, ready: 0 };
      store.onEventsRecorded(() => (heard.events += 1));
      store.onDeliveriesReady(() => (heard.ready += 1));
      const creations = Array.from({ length: 6 }, () => orderCreation(env));
      armed.left = faults;
      const settled = await Promise.allSettled(creations.map((c) => store.createOrder(c)));
      armed.left = 0;
      return { store, creations, settled, heard };
    }

    it('once: every caller is answered store-unavailable and none of the orders is stored; the same orders again are created', async () => {
      const { store, creations, settled, heard } = await batchOfSix(1);
      try {
        expect(settled.map((s) => s.status === 'rejected' && isStoreUnavailable(s.reason))).toEqual(Array(6).fill(true));
        expect(await storedCounts(store, creations)).toEqual({ orders: 0, events: 0, deliveries: 0 });
        expect(heard).toEqual({ events: 0, ready: 0 });
        // Nothing of the failed batch stands, its order numbers included.
        const again = await Promise.all(creations.map((c) => store.createOrder(c)));
        expect(again.map((r) => (r.created ? r.order.orderNumber : null))).toEqual(creations.map((_, i) => `ORD-${String(i + 1).padStart(6, '0')}`));
        expect(await storedCounts(store, creations)).toEqual({ orders: 6, events: 6, deliveries: 6 });
      } finally {
        await store.close();
      }
    });

    it('an out-of-memory: every caller is answered store-unavailable (503, not a 500) and nothing is stored', async () => {
      const { store, creations, settled } = await batchOfSix(1, 'SQLITE_NOMEM');
      try {
        expect(settled.map((s) => s.status === 'rejected' && (s.reason as { code?: string }).code === 'SQLITE_NOMEM' && isStoreUnavailable(s.reason))).toEqual(Array(6).fill(true));
        expect(await storedCounts(store, creations)).toEqual({ orders: 0, events: 0, deliveries: 0 });
      } finally {
        await store.close();
      }
    });

    it('every time: every caller is answered store-unavailable (none left waiting) and nothing is stored', async () => {
      const { store, creations, settled, heard } = await batchOfSix(Infinity);
      try {
        expect(settled.map((s) => s.status === 'rejected' && isStoreUnavailable(s.reason))).toEqual(Array(6).fill(true));
        expect(await storedCounts(store, creations)).toEqual({ orders: 0, events: 0, deliveries: 0 });
        expect(heard).toEqual({ events: 0, ready: 0 });
      } finally {
        await store.close();
      }
    });
  });
});
