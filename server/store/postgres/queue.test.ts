// The PostgreSQL queue's lost claims: a claim whose COMMIT went unanswered is given back by
// its owner and lease end, and each owner's lease ends strictly increase, so two claims of one
// owner in the same millisecond are told apart and only the lost one's leases go.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { T0, deliveryRecord, seedEndpointAndEvent, seedEnvironment } from '../suite/fixtures.ts';
import { LeaseEnds, releaseLostClaim } from './queue.ts';
import { openPostgresStore, type PostgresStore } from './store.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';

let db: TestDatabase;
let store: PostgresStore;
let raw: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  store = await openPostgresStore({ connectionString: db.url });
  await store.migrate();
  raw = new pg.Pool({ connectionString: db.url, max: 1 });
});
afterAll(async () => {
  await raw?.end();
  await store?.close();
  await db?.drop();
});

describe('PostgreSQL lost claims', () => {
  it('lease ends increase strictly per owner: now + leaseMs, or 1 ms past the last', () => {
    const ends = new LeaseEnds();
    expect([ends.next('a', T0, 30_000), ends.next('a', T0, 30_000), ends.next('b', T0, 30_000), ends.next('a', T0 + 5, 30_000)]).toEqual([
      T0 + 30_000,
      T0 + 30_001,
      T0 + 30_000,
      T0 + 30_005,
    ]);
  });

  it('two claims of one owner in the same millisecond get distinct lease ends; giving back the first leaves the second', async () => {
    const { env } = await seedEnvironment(store);
    const { ep, event } = await seedEndpointAndEvent(store, env, { orderId: 'c0ffee00-1234-4abc-8def-0123456789ab', merchantReference: 'INV-2026-0420' });
    const first = deliveryRecord(event, ep, { nextAttemptAt: T0 - 1 });
    const second = deliveryRecord(event, ep, { nextAttemptAt: T0 });
    await store.transaction(async (tx) => {
      await tx.deliveries.insert(first);
      await tx.deliveries.insert(second);
    });
    const claim = () => store.queue.claim({ owner: 'w', now: T0, leaseMs: 30_000, limit: 1, perEndpointLimit: 10 });
    const [a] = await claim();
    const [b] = await claim();
    expect([a?.delivery.id, a?.delivery.leaseExpiresAt]).toEqual([first.id, T0 + 30_000]);
    expect([b?.delivery.id, b?.delivery.leaseExpiresAt]).toEqual([second.id, T0 + 30_001]);

    // The first claim's COMMIT went unanswered, as far as its worker knows: only its lease goes.
    expect(await releaseLostClaim(raw, 'w', T0 + 30_000)).toBe(1);
    const lease = (id: string) => store.read((tx) => tx.deliveries.get(env.id, id));
    expect(await lease(first.id)).toMatchObject({ leaseOwner: null, leaseExpiresAt: null });
    expect(await lease(second.id)).toMatchObject({ leaseOwner: 'w', leaseExpiresAt: T0 + 30_001 });
  });
});
