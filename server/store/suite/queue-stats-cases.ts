// Queue depth for the operator's metrics: due, leased, waiting, and the oldest due time.
import { expect, it } from 'vitest';
import type { Store } from '../../domain/store.ts';
import { T0, deliveryRecord, endpointRecord, eventRecord, seedEnvironment } from './fixtures.ts';

export function queueStatsCases(s: () => Store): void {
  it('stats counts pending deliveries by due, leased and waiting, and names the oldest due time', async () => {
    expect(await s().queue.stats(T0)).toEqual({ due: 0, leased: 0, waiting: 0, oldestDueAt: null });
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env);
    const event = eventRecord(env, { orderId: 'c0ffee00-1234-4abc-8def-0123456789ab', merchantReference: 'INV-1' });
    const oldest = deliveryRecord(event, ep, { nextAttemptAt: T0 - 5000 });
    const due = deliveryRecord(event, ep, { nextAttemptAt: T0 - 1000 });
    const leased = deliveryRecord(event, ep, { nextAttemptAt: T0 - 9000 });
    const expired = deliveryRecord(event, ep, { nextAttemptAt: T0 - 7000 });
    const later = deliveryRecord(event, ep, { nextAttemptAt: T0 + 60_000, attemptCount: 1 });
    const done = deliveryRecord(event, ep, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0 });
    const dead = deliveryRecord(event, ep, { state: 'failed', nextAttemptAt: T0 - 99_000 });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(ep);
      await tx.events.insert(event);
      for (const d of [oldest, due, leased, expired, later, done, dead]) await tx.deliveries.insert(d);
    });
    // Leases as the queue gives them: worker-a's, live until T0 + 30 s, on the earliest due;
    // worker-b's, taken at T0 - 7 s for 6 999 ms, on the next (the first is leased by then).
    const take = (owner: string, now: number, leaseMs: number) => s().queue.claim({ owner, now, leaseMs, limit: 1, perEndpointLimit: 10 });
    expect((await take('worker-a', T0, 30_000)).map((c) => c.delivery.id)).toEqual([leased.id]);
    expect((await take('worker-b', T0 - 7000, 6999)).map((c) => c.delivery.id)).toEqual([expired.id]);
    // An expired lease counts as due again; delivered and failed ones not at all.
    expect(await s().queue.stats(T0)).toEqual({ due: 3, leased: 1, waiting: 1, oldestDueAt: T0 - 7000 });
    expect(await s().queue.stats(T0 + 60_000)).toEqual({ due: 5, leased: 0, waiting: 0, oldestDueAt: T0 - 9000 });
  });
}
