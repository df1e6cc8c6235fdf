// Recovery by time range at the store: which deliveries a window matches (recoverable), and
// the restart of a failed or delivered one into a new cycle due at a given time.
import { expect, it } from 'vitest';
import type { Store } from '../../domain/store.ts';
import { T0, deliveryRecord, endpointRecord, eventRecord, seedEnvironment } from './fixtures.ts';

export function recoveryCases(s: () => Store): void {
  it('recoverable matches only the event types given (the endpoint’s), every type for null', async () => {
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env);
    const created = eventRecord(env, { type: 'order.created' });
    const paid = eventRecord(env, { type: 'order.paid' });
    const ofCreated = deliveryRecord(created, ep, { createdAt: T0 + 1, state: 'failed', nextAttemptAt: null });
    const ofPaid = deliveryRecord(paid, ep, { createdAt: T0 + 2, state: 'failed', nextAttemptAt: null });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(ep);
      for (const e of [created, paid]) await tx.events.insert(e);
      for (const d of [ofCreated, ofPaid]) await tx.deliveries.insert(d);
    });
    const q = (eventTypes: readonly string[] | null) =>
      s().read((tx) => tx.deliveries.recoverable(env.id, { endpointId: ep.id, since: T0, until: T0 + 100, delivered: false, limit: 10, eventTypes }));
    expect((await q(['order.paid'])).map((d) => d.id)).toEqual([ofPaid.id]);
    expect((await q(['order.paid', 'order.created'])).map((d) => d.id)).toEqual([ofCreated.id, ofPaid.id]);
    expect((await q(null)).map((d) => d.id)).toEqual([ofCreated.id, ofPaid.id]);
  });

  it('recoverable matches the endpoint’s order deliveries of the window, failed (or delivered too), oldest first', async () => {
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env);
    const other = endpointRecord(env, { active: false });
    const event = eventRecord(env);
    const at = (createdAt: number, state: 'failed' | 'delivered' | 'pending', o: Partial<Parameters<typeof deliveryRecord>[2]> = {}) =>
      deliveryRecord(event, ep, { createdAt, state, nextAttemptAt: state === 'pending' ? T0 : null, ...o });
    const failedA = at(T0 + 10, 'failed');
    const failedB = at(T0 + 20, 'failed');
    const delivered = at(T0 + 30, 'delivered', { deliveredAt: T0 + 31 });
    const pending = at(T0 + 40, 'pending');
    const before = at(T0 - 1, 'failed');
    const atUntil = at(T0 + 100, 'failed');
    const test = at(T0 + 50, 'failed', { kind: 'webhook_test' });
    const elsewhere = deliveryRecord(event, other, { createdAt: T0 + 60, state: 'failed', nextAttemptAt: null });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(ep);
      await tx.endpoints.insert(other);
      await tx.events.insert(event);
      for (const d of [failedA, failedB, delivered, pending, before, atUntil, test, elsewhere]) await tx.deliveries.insert(d);
    });
    const q = (delivered: boolean, limit = 10) => s().read((tx) => tx.deliveries.recoverable(env.id, { endpointId: ep.id, since: T0, until: T0 + 100, delivered, limit, eventTypes: null }));
    expect((await q(false)).map((d) => d.id)).toEqual([failedA.id, failedB.id]);
    expect((await q(true)).map((d) => d.id)).toEqual([failedA.id, failedB.id, delivered.id]);
    expect((await q(true, 1)).map((d) => d.id)).toEqual([failedA.id]);

    const target = { environmentId: env.id, endpointId: ep.id, endpointVersion: ep.version, url: ep.url, now: T0 + 500 };
    // A delivered one restarts only when asked for; the due time is the one given.
    expect(await s().transaction((tx) => tx.deliveries.restart({ id: delivered.id, ...target }))).toBe(false);
    expect(await s().transaction((tx) => tx.deliveries.restart({ id: delivered.id, ...target, dueAt: T0 + 550, delivered: true }))).toBe(true);
    expect(await s().read((tx) => tx.deliveries.get(env.id, delivered.id))).toMatchObject({ state: 'pending', cycle: 2, attemptCount: 0, nextAttemptAt: T0 + 550, deliveredAt: null, updatedAt: T0 + 500 });
    // Now pending: no longer matched, so a second recovery of the window does not queue it again.
    expect((await q(true)).map((d) => d.id)).toEqual([failedA.id, failedB.id]);
  });
}
