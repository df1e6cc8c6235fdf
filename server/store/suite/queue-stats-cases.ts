// Queue depth for the operator's metrics: due, leased, waiting, and the oldest due time.
import { expect, it } from 'vitest';
import type { Store } from '../types.ts';
import { T0, deliveryRecord, endpointRecord, eventRecord, seedEnvironment } from './fixtures.ts';

export function queueStatsCases(s: () => Store): void {
  it('stats counts pending deliveries by due, leased and waiting, and names the oldest due time', async () => {
    expect(await s().queue.stats(T0)).toEqual({ due: 0, leased: 0, waiting: 0, oldestDueAt: null });
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env);
    const event = eventRecord(env, { orderId: 'c0ffee00-1234-4abc-8def-0123456789ab', merchantReference: 'INV-1' });
    const oldest = deliveryRecord(event, ep, { nextAttemptAt: T0 - 5000 });
    const due = deliveryRecord(event, ep, { nextAttemptAt: T0 - 1000 });
    const leased = deliveryRecord(event, ep, { nextAttemptAt: T0 - 9000, leaseOwner: 'worker-a', leaseExpiresAt: T0 + 30_000 });
    const expired = deliveryRecord(event, ep, { nextAttemptAt: T0 - 2000, leaseOwner: 'worker-b', leaseExpiresAt: T0 - 1 });
    const later = deliveryRecord(event, ep, { nextAttemptAt: T0 + 60_000, attemptCount: 1 });
    const done = deliveryRecord(event, ep, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0 });
    const dead = deliveryRecord(event, ep, { state: 'failed', nextAttemptAt: T0 - 99_000 });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(ep);
      await tx.events.insert(event);
      for (const d of [oldest, due, leased, expired, later, done, dead]) await tx.deliveries.insert(d);
    });
    // An expired lease counts as due again; delivered and failed ones not at all.
    expect(await s().queue.stats(T0)).toEqual({ due: 3, leased: 1, waiting: 1, oldestDueAt: T0 - 5000 });
    expect(await s().queue.stats(T0 + 60_000)).toEqual({ due: 5, leased: 0, waiting: 0, oldestDueAt: T0 - 9000 });
  });
}
