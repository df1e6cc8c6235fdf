import { afterEach, describe, expect, it, vi } from 'vitest';
import { T0, attempt, deliveryRecord, seedEndpointAndEvent, seedEnvironment } from '../suite/fixtures.ts';
import { openSqliteStore } from './store.ts';

// better-sqlite3 compiles a row constructor (global `Function`) each time SQLite (re)prepares a
// statement that returns rows, so counting those calls counts re-preparations (see sql.test.ts).
describe('sqlite delivery queue statements', () => {
  afterEach(() => vi.restoreAllMocks());

  it('keep their plan across claims and completions with other values', async () => {
    const store = await openSqliteStore({ file: ':memory:' });
    await store.migrate();
    const { env } = await seedEnvironment(store);
    const { ep, event } = await seedEndpointAndEvent(store, env);
    const ds = Array.from({ length: 40 }, (_, i) => deliveryRecord(event, ep, { nextAttemptAt: T0 + i }));
    await store.transaction(async (tx) => {
      for (const d of ds) await tx.deliveries.insert(d);
    });
    const claim = (now: number, limit: number, perEndpointLimit: number) => ({ owner: 'w', now, leaseMs: 30_000, limit, perEndpointLimit, exclusive: true });
    // Prepared here, once: both claim steps (the window fills, then it does not), the lease, the read.
    expect(await store.queue.claim(claim(T0 + 100, 2, 2))).toHaveLength(2);
    expect(await store.queue.claim(claim(T0 + 110, 4, 3))).toHaveLength(1);
    // And a completion (its lease's end returns a row: one row constructor, compiled here).
    const [first] = await store.queue.claim(claim(T0 + 115, 1, 4));
    const done = { attempt: attempt(first!.delivery.id, { startedAt: T0 + 99 }), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 199 };
    expect((await store.queue.completeAndClaim('w', [{ deliveryId: first!.delivery.id, leaseExpiresAt: first!.delivery.leaseExpiresAt!, result: done }], null)).applied).toEqual([true]);
    const compiled = vi.spyOn(globalThis, 'Function');
    let held = (await store.queue.claim(claim(T0 + 120, 5, 9))).map((c) => c.delivery);
    for (let i = 0; i < 5; i++) {
      const done = held.slice(0, 2);
      const completions = done.map((d) => ({
        deliveryId: d.id,
        leaseExpiresAt: d.leaseExpiresAt!,
        result: { attempt: attempt(d.id, { startedAt: T0 + 100 + i }), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 200 + i },
      }));
      const r = await store.queue.completeAndClaim('w', completions, claim(T0 + 130 + i, 3 + i, 10 + i));
      expect(r.applied).toEqual([true, true]);
      expect(r.claimed.length).toBeGreaterThan(0);
      held = [...held.slice(2), ...r.claimed.map((c) => c.delivery)];
    }
    // A bare parameter in LIMIT, in `column <= ?` or in `? IS NULL` made SQLite re-plan these
    // statements (and better-sqlite3 compile a new row constructor) on every call.
    expect(compiled).not.toHaveBeenCalled();
    await store.close();
  });
});
