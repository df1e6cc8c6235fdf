// The bulk orders statement on real connections: however the batches' columns vary (what
// clients send, tracing on or off), each connection holds a bounded set of prepared statements.
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { EnvironmentRecord } from '../../domain/model.ts';
import type { OrderCreation } from '../../domain/store.ts';
import { seedEnvironment, seedRoutedEndpoints } from '../suite/fixtures.ts';
import { fanOutDeliveryId } from '../fan-out.ts';
import { orderCreation } from '../suite/order-creation-cases.ts';
import { DeliveryListeners } from '../tx.ts';
import { bulkOrders } from './bulk-orders.ts';
import { Conn } from './db.ts';
import { OrderNumbers } from './order-numbers.ts';
import { openPostgresStore } from './store.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';

/** The batch `pattern` (bits) describes: which of the columns clients or tracing set vary between its orders. */
function batch(envs: readonly [EnvironmentRecord, EnvironmentRecord], pattern: number, n: number): OrderCreation[] {
  const bit = (b: number): boolean => (pattern & (1 << b)) !== 0;
  return Array.from({ length: 3 }, (_, i) => {
    const c = orderCreation(bit(6) && i > 0 ? envs[1] : envs[0], bit(4) && i !== 1 ? `key-${n}-${i}` : null);
    const order = {
      ...c.order,
      amountMinor: bit(0) ? 100 + i : c.order.amountMinor,
      assetId: bit(1) && i > 0 ? 'usdt' : c.order.assetId,
      networkId: bit(2) && i > 0 ? 'polygon' : c.order.networkId,
      merchantReference: bit(3) ? `INV-${n}-${i}` : `INV-${n}`,
      amountBaseUnits: bit(7) ? `${1_000 + i}` : c.order.amountBaseUnits,
      createdAt: bit(8) ? c.order.createdAt + i : c.order.createdAt,
    };
    const event = { ...c.event, environmentId: order.environmentId, merchantReference: order.merchantReference, ...(bit(5) && i === 0 ? { traceContext: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` } : {}) };
    const delivery = { ...c.delivery, environmentId: order.environmentId, merchantReference: order.merchantReference };
    return { ...c, order, event, delivery };
  });
}

describe('PostgreSQL bulk orders', () => {
  let db: TestDatabase | null = null;
  const pools: pg.Pool[] = [];

  afterEach(async () => {
    for (const p of pools.splice(0)) await p.end();
    await db?.drop();
    db = null;
  });

  const pool = (max: number): pg.Pool => {
    const p = new pg.Pool({ connectionString: db!.url, max });
    p.on('error', () => undefined);
    pools.push(p);
    return p;
  };

  it('a thousand batches whose columns vary in every pattern leave two prepared statements on each connection, one with keys and one without', async () => {
    db = await createTestDatabase();
    const store = await openPostgresStore({ connectionString: db.url, poolSize: 2, log: pino({ level: 'silent' }) });
    let envs: [EnvironmentRecord, EnvironmentRecord];
    try {
      await store.migrate();
      envs = [(await seedEnvironment(store)).env, (await seedEnvironment(store)).env];
    } finally {
      await store.close();
    }
    const kind = bulkOrders(new OrderNumbers(new Conn(pool(1))), new DeliveryListeners(() => undefined));
    const connections = pool(2);
    const clients = [await connections.connect(), await connections.connect()];
    try {
      for (let n = 0; n < 1_000; n++) {
        const outcomes = await kind.run(clients[n % 2]!, batch(envs, n % 512, n));
        expect(outcomes.map((o) => o.value.created)).toEqual([true, true, true]);
      }
      const prepared = async (c: pg.PoolClient): Promise<number> => (await c.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements')).rows[0]!.n;
      expect(await Promise.all(clients.map(prepared))).toEqual([2, 2]);
      expect((await clients[0]!.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]!.n).toBe(3_000);
    } finally {
      for (const c of clients) c.release();
    }
  });

  it('fans each order out in the statement: one delivery per active endpoint taking order.created, with and without keys', async () => {
    db = await createTestDatabase();
    const store = await openPostgresStore({ connectionString: db.url, poolSize: 2, log: pino({ level: 'silent' }) });
    await store.migrate();
    const { env } = await seedEnvironment(store);
    const bare = (await seedEnvironment(store)).env;
    const { targets } = await seedRoutedEndpoints(store, env);
    const kind = bulkOrders(new OrderNumbers(new Conn(pool(1))), new DeliveryListeners(() => undefined));
    const client = await pool(1).connect();
    try {
      for (const keyed of [false, true]) {
        const items = [orderCreation(env, keyed ? `k-${env.id}-1` : null), orderCreation(bare), orderCreation(env)];
        const outcomes = await kind.run(client, items);
        expect(outcomes.map((o) => o.value)).toEqual(items.map((c, i) => ({ created: true, order: expect.anything(), delivery: i !== 1 })));
        for (const c of items) {
          const { items: got } = await store.read((tx) => tx.deliveries.list(c.order.environmentId, { q: c.order.id, limit: 10, cursor: null }));
          const want = c.order.environmentId === bare.id ? [] : targets.map((ep, rank) => ({ ...c.delivery, id: fanOutDeliveryId(c.delivery.id, ep.id, rank + 1), endpointId: ep.id, endpointVersion: ep.version, url: ep.url }));
          expect([...got].sort((a, b) => (a.endpointId! < b.endpointId! ? -1 : 1))).toEqual(want);
        }
      }
    } finally {
      client.release();
      await store.close();
    }
  });
});
