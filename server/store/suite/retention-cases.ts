// Store.prune: bounded batches of expired rows, each environment by its own cutoff; what is
// still pending, still referred to, or a financial record stays.
import { expect, it } from 'vitest';
import type { DeliveryRecord, EventRecord } from '../../domain/model.ts';
import type { PruneRequest, Store } from '../../domain/store.ts';
import { T0, attempt, deliveryRecord, endpointRecord, eventRecord, orderRecord, seedEnvironment } from './fixtures.ts';

const DAY = 86_400_000;
const NOW = T0 + 40 * DAY;
const policy = (limit: number): PruneRequest => ({ activityBefore: { live: NOW - 30 * DAY, test: NOW - 7 * DAY }, keysBefore: NOW - 3 * DAY, limit });

export function retentionCases(s: () => Store): void {
  const exists = async (environmentId: string, d: DeliveryRecord): Promise<boolean> => (await s().read((tx) => tx.deliveries.get(environmentId, d.id))) !== null;
  const eventExists = async (e: EventRecord): Promise<boolean> => (await s().read((tx) => tx.events.get(e.environmentId, e.id))) !== null;

  it('prune removes expired deliveries that are done, with their attempts, and events nothing refers to; keeps pending, recent and financial rows', async () => {
    const { tenant, env: live } = await seedEnvironment(s(), { name: 'live' });
    const { env: test } = await seedEnvironment(s(), { name: 'test', tenant });
    const ep = endpointRecord(live);
    const old = eventRecord(live, { createdAt: T0 });
    const oldPending = eventRecord(live, { createdAt: T0 });
    const tenDays = eventRecord(live, { createdAt: NOW - 10 * DAY });
    const testTenDays = eventRecord(test, { createdAt: NOW - 10 * DAY });
    const sent = deliveryRecord(old, ep, { createdAt: T0, nextAttemptAt: T0 });
    const failed = deliveryRecord(old, ep, { state: 'failed', nextAttemptAt: null, createdAt: T0 });
    const retrying = deliveryRecord(oldPending, ep, { createdAt: T0, nextAttemptAt: NOW + 60_000, attemptCount: 3 });
    const recent = deliveryRecord(tenDays, ep, { state: 'delivered', nextAttemptAt: null, deliveredAt: NOW - 10 * DAY, createdAt: NOW - 10 * DAY });
    const testFailed = deliveryRecord(testTenDays, null, { state: 'failed', nextAttemptAt: null, createdAt: NOW - 10 * DAY });
    const order = orderRecord(live, 'ORD-000001', { createdAt: T0 });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(ep);
      for (const e of [old, oldPending, tenDays, testTenDays]) await tx.events.insert(e);
      for (const d of [sent, failed, retrying, recent, testFailed]) await tx.deliveries.insert(d);
      await tx.orders.insert(order);
      await tx.orders.insertIdempotencyKey(live.id, 'expired-key', { orderId: order.id, requestHash: 'a'.repeat(64), createdAt: T0 });
      await tx.orders.insertIdempotencyKey(live.id, 'fresh-key', { orderId: order.id, requestHash: 'b'.repeat(64), createdAt: NOW - DAY });
    });
    // `sent` gets its attempt the way the worker records one.
    const [claimed] = await s().queue.claim({ owner: 'w', now: T0, leaseMs: 30_000, limit: 1, perEndpointLimit: 4 });
    expect(claimed?.delivery.id).toBe(sent.id);
    const result = { attempt: attempt(sent.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 };
    expect((await s().queue.completeAndClaim('w', [{ deliveryId: sent.id, leaseExpiresAt: T0 + 30_000, result }], null)).applied).toEqual([true]);

    const r = await s().prune(policy(100));
    expect(r).toEqual({ ran: true, deleted: { events: 2, deliveries: 3, attempts: 1, idempotencyKeys: 1 }, more: false, oldest: { events: T0, deliveries: T0 } });
    expect(await exists(live.id, sent)).toBe(false);
    expect(await exists(live.id, failed)).toBe(false);
    expect(await exists(test.id, testFailed)).toBe(false);
    expect(await s().read((tx) => tx.deliveries.attempts(sent.id))).toEqual([]);
    expect(await eventExists(old)).toBe(false);
    expect(await eventExists(testTenDays)).toBe(false);
    // Still being retried, its event with it; within the live period; financial records.
    expect(await exists(live.id, retrying)).toBe(true);
    expect(await eventExists(oldPending)).toBe(true);
    expect(await exists(live.id, recent)).toBe(true);
    expect(await eventExists(tenDays)).toBe(true);
    expect(await s().read((tx) => tx.orders.get(live.id, order.id))).not.toBeNull();
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(live.id, 'expired-key'))).toBeNull();
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(live.id, 'fresh-key'))).not.toBeNull();
    // Nothing left to do.
    expect((await s().prune(policy(100))).deleted).toEqual({ events: 0, deliveries: 0, attempts: 0, idempotencyKeys: 0 });
  });

  it('prune works in batches of at most `limit` rows per table and says when more remain', async () => {
    const { env } = await seedEnvironment(s(), { name: 'test' });
    const events = Array.from({ length: 5 }, () => eventRecord(env, { createdAt: T0 }));
    const order = orderRecord(env, 'ORD-000001', { createdAt: T0 });
    await s().transaction(async (tx) => {
      await tx.orders.insert(order);
      for (const [i, e] of events.entries()) {
        await tx.events.insert(e);
        await tx.deliveries.insert(deliveryRecord(e, null, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0, createdAt: T0 }));
        await tx.orders.insertIdempotencyKey(env.id, `key-${i}`, { orderId: order.id, requestHash: 'c'.repeat(64), createdAt: T0 });
      }
    });
    const batches: number[][] = [];
    for (let more = true; more; ) {
      const r = await s().prune(policy(2));
      batches.push([r.deleted.deliveries, r.deleted.events, r.deleted.idempotencyKeys]);
      more = r.more;
      expect(batches.length).toBeLessThan(10);
    }
    for (const b of batches) for (const n of b) expect(n).toBeLessThanOrEqual(2);
    const total = (i: number): number => batches.reduce((sum, b) => sum + (b[i] ?? 0), 0);
    expect([total(0), total(1), total(2)]).toEqual([5, 5, 5]);
    expect((await s().prune(policy(2))).oldest).toEqual({ events: null, deliveries: null });
  });
}
