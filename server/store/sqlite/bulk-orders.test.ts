// The batched order writes of the SQLite store (bulk-orders.ts): a batch's orders take a few
// statements for all of them, numbered in submission order, and a batch that fails falls back
// to one savepoint per order, so only the bad order's caller fails.
import { describe, expect, it } from 'vitest';
import { endpointRecord, seedEnvironment } from '../suite/fixtures.ts';
import { orderCreation } from '../suite/order-creation-cases.ts';
import { statementRecordingStores, writeHeads } from './testing.ts';

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
});
