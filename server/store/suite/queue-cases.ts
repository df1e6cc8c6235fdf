// The delivery queue: claiming with leases, completing, releasing, and when work is next due.
import { expect, it } from 'vitest';
import type { AttemptResult, Store } from '../../domain/store.ts';
import type { DeliveryRecord, EndpointRecord, EnvironmentRecord, EventRecord } from '../../domain/model.ts';
import { T0, attempt, deliveryRecord, endpointRecord, seedEndpointAndEvent, seedEnvironment } from './fixtures.ts';
import { until } from '../../../testing/until.ts';

interface World {
  env: EnvironmentRecord;
  ep: EndpointRecord;
  event: EventRecord;
}

async function world(store: Store): Promise<World> {
  const { env } = await seedEnvironment(store);
  const { ep, event } = await seedEndpointAndEvent(store, env, { orderId: 'c0ffee00-1234-4abc-8def-0123456789ab', merchantReference: 'INV-2026-0420' });
  return { env, ep, event };
}

/** Inserts the deliveries in order, 50 a transaction: a long backlog in one would outlast a store transaction's deadline on a loaded PostgreSQL (a round trip each). */
async function insert(store: Store, ...deliveries: DeliveryRecord[]): Promise<void> {
  for (let i = 0; i < deliveries.length; i += 50) {
    await store.transaction(async (tx) => {
      for (const d of deliveries.slice(i, i + 50)) await tx.deliveries.insert(d);
    });
  }
}

const opts = (owner: string, now: number, o: { leaseMs?: number; limit?: number; perEndpointLimit?: number; exclusive?: boolean } = {}) => ({
  owner,
  now,
  leaseMs: o.leaseMs ?? 30_000,
  limit: o.limit ?? 100,
  perEndpointLimit: o.perEndpointLimit ?? 100,
  ...(o.exclusive !== undefined ? { exclusive: o.exclusive } : {}),
});

export function queueCases(s: () => Store): void {
  const get = (w: World, id: string) => s().transaction((tx) => tx.deliveries.get(w.env.id, id));
  const attempts = (id: string) => s().transaction((tx) => tx.deliveries.attempts(id));
  // One attempt recorded the way the worker records its batches: completeAndClaim, no claim.
  const complete = async (owner: string, deliveryId: string, leaseExpiresAt: number, result: AttemptResult) =>
    (await s().queue.completeAndClaim(owner, [{ deliveryId, leaseExpiresAt, result }], null)).applied[0];

  it('claim returns due deliveries only, oldest due first, with their event and signing secret', async () => {
    const w = await world(s());
    const early = deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 5000 });
    const now = deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 });
    const future = deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 + 1 });
    const callback = deliveryRecord(w.event, null, { nextAttemptAt: T0 - 1000 });
    const delivered = deliveryRecord(w.event, w.ep, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0 - 10 });
    const failed = deliveryRecord(w.event, w.ep, { state: 'failed', nextAttemptAt: T0 - 10 });
    await insert(s(), future, now, delivered, callback, failed, early);
    const claimed = await s().queue.claim(opts('worker-a', T0));
    expect(claimed.map((c) => c.delivery.id)).toEqual([early.id, callback.id, now.id]);
    expect(claimed[0]).toEqual({ delivery: { ...early, leaseOwner: 'worker-a', leaseExpiresAt: T0 + 30_000 }, event: w.event, secretEnc: w.ep.secretEnc, signatureScheme: w.ep.signatureScheme, endpointFailures: 0 });
    expect(claimed[1]?.secretEnc).toBe(w.env.callbackSecretEnc);
    expect(claimed[1]?.signatureScheme).toBe('service-signature');
    expect(await s().queue.claim(opts('worker-a', T0))).toEqual([]);
    expect((await s().queue.claim(opts('worker-a', T0 + 1))).map((c) => c.delivery.id)).toEqual([future.id]);
  });

  it('a claim carries the endpoint\'s signature scheme as it is at the claim; a payout callback always service-signature', async () => {
    const w = await world(s());
    const d = deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 });
    const callback = deliveryRecord(w.event, null, { nextAttemptAt: T0 });
    await insert(s(), d, callback);
    await s().transaction((tx) => tx.endpoints.update({ ...w.ep, signatureScheme: 'standard-webhooks' }));
    const claimed = await s().queue.claim(opts('worker-a', T0));
    expect(Object.fromEntries(claimed.map((c) => [c.delivery.id, c.signatureScheme]))).toEqual({ [d.id]: 'standard-webhooks', [callback.id]: 'service-signature' });
    // Issue 69: the endpoint's failures in a row ride with the claim (a payout callback has none).
    await s().transaction((tx) => tx.endpoints.update({ ...w.ep, signatureScheme: 'standard-webhooks', failingSince: T0, consecutiveFailures: 3 }));
    await s().queue.release('worker-a', claimed.map((c) => c.delivery.id));
    const again = await s().queue.claim(opts('worker-a', T0 + 2));
    expect(Object.fromEntries(again.map((c) => [c.delivery.id, c.endpointFailures]))).toEqual({ [d.id]: 3, [callback.id]: 0 });
  });

  it('leases are the queue\'s: inserting a delivery that has one is refused and writes nothing', async () => {
    const w = await world(s());
    const d = deliveryRecord(w.event, w.ep, { leaseOwner: 'worker-a', leaseExpiresAt: T0 + 30_000 });
    await expect(insert(s(), d)).rejects.toThrow(/has no lease/);
    expect(await s().transaction((tx) => tx.deliveries.get(w.env.id, d.id))).toBeNull();
  });

  it('claim honours limit', async () => {
    const w = await world(s());
    const ds = Array.from({ length: 5 }, (_, i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 5 + i }));
    await insert(s(), ...ds);
    expect((await s().queue.claim(opts('a', T0, { limit: 2 }))).map((c) => c.delivery.id)).toEqual([ds[0]!.id, ds[1]!.id]);
    expect((await s().queue.claim(opts('a', T0, { limit: 2 }))).map((c) => c.delivery.id)).toEqual([ds[2]!.id, ds[3]!.id]);
  });

  it('a leased delivery is not claimed by another owner until the lease expires; the late complete is then refused', async () => {
    const w = await world(s());
    const d = deliveryRecord(w.event, w.ep);
    await insert(s(), d);
    expect(await s().queue.claim(opts('worker-a', T0, { leaseMs: 30_000 }))).toHaveLength(1);
    expect(await s().queue.claim(opts('worker-b', T0 + 29_999))).toEqual([]);
    const reclaimed = await s().queue.claim(opts('worker-b', T0 + 30_000, { leaseMs: 30_000 }));
    expect(reclaimed.map((c) => c.delivery)).toEqual([{ ...d, leaseOwner: 'worker-b', leaseExpiresAt: T0 + 60_000 }]);
    const result = { attempt: attempt(d.id, { startedAt: T0 + 100 }), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 283 };
    expect(await complete('worker-a', d.id, T0 + 30_000, result)).toBe(false);
    expect(await attempts(d.id)).toEqual([]);
    expect(await complete('worker-b', d.id, T0 + 60_000, { ...result, attempt: attempt(d.id, { startedAt: T0 + 30_100 }) })).toBe(true);
    expect(await attempts(d.id)).toHaveLength(1);
  });

  it('two concurrent claimers of 50 due deliveries never share one and together get all 50', async () => {
    const w = await world(s());
    const ds = Array.from({ length: 50 }, (_, i) =>
      deliveryRecord(w.event, i % 2 ? w.ep : null, { url: i % 2 ? w.ep.url : `https://api.northwind.example/callbacks/${i % 5}`, nextAttemptAt: T0 - i }),
    );
    await insert(s(), ...ds);
    const drain = async (owner: string): Promise<string[]> => {
      const got: string[] = [];
      for (;;) {
        const batch = await s().queue.claim(opts(owner, T0, { limit: 7, leaseMs: 60_000 }));
        if (batch.length === 0) return got;
        for (const c of batch) expect(c.delivery.leaseOwner).toBe(owner);
        got.push(...batch.map((c) => c.delivery.id));
      }
    };
    const [a, b] = await Promise.all([drain('worker-a'), drain('worker-b')]);
    const all = [...a, ...b];
    expect(new Set(all).size).toBe(all.length);
    expect(new Set(all)).toEqual(new Set(ds.map((d) => d.id)));
  });

  it('perEndpointLimit caps the live leases per destination (endpoint, or url for callbacks)', async () => {
    const w = await world(s());
    const toEndpoint = Array.from({ length: 5 }, (_, i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 100 + i }));
    const toUrl = Array.from({ length: 3 }, (_, i) => deliveryRecord(w.event, null, { nextAttemptAt: T0 - 50 + i }));
    const otherUrl = deliveryRecord(w.event, null, { url: 'https://billing.northwind.example/callbacks', nextAttemptAt: T0 });
    await insert(s(), ...toEndpoint, ...toUrl, otherUrl);
    const first = await s().queue.claim(opts('worker-a', T0, { perEndpointLimit: 2 }));
    expect(first.map((c) => c.delivery.id)).toEqual([toEndpoint[0]!.id, toEndpoint[1]!.id, toUrl[0]!.id, toUrl[1]!.id, otherUrl.id]);
    // The limit counts every live lease, whoever holds it.
    expect(await s().queue.claim(opts('worker-b', T0, { perEndpointLimit: 2 }))).toEqual([]);
    const done = { attempt: attempt(toEndpoint[0]!.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 183 };
    expect(await complete('worker-a', toEndpoint[0]!.id, T0 + 30_000, done)).toBe(true);
    expect((await s().queue.claim(opts('worker-b', T0, { perEndpointLimit: 2 }))).map((c) => c.delivery.id)).toEqual([toEndpoint[2]!.id]);
    expect((await s().queue.claim(opts('worker-b', T0, { perEndpointLimit: 3 }))).map((c) => c.delivery.id)).toEqual([toEndpoint[3]!.id, toUrl[2]!.id]);
  });

  it('complete by a non-owner returns false and writes nothing', async () => {
    const w = await world(s());
    const d = deliveryRecord(w.event, w.ep);
    await insert(s(), d);
    await s().queue.claim(opts('worker-a', T0));
    const result = { attempt: attempt(d.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 183 };
    expect(await complete('worker-b', d.id, T0 + 30_000, result)).toBe(false);
    expect(await complete('worker-b', 'dlv_unknown', T0 + 30_000, { ...result, attempt: attempt('dlv_unknown') })).toBe(false);
    expect(await get(w, d.id)).toEqual({ ...d, leaseOwner: 'worker-a', leaseExpiresAt: T0 + 30_000 });
    expect(await attempts(d.id)).toEqual([]);
  });

  it('complete by the owner stores the attempt and moves the delivery to its next state', async () => {
    const w = await world(s());
    const d = deliveryRecord(w.event, w.ep);
    await insert(s(), d);
    await s().queue.claim(opts('worker-a', T0));
    const first = attempt(d.id, {
      durationMs: 10_000,
      outcome: 'error',
      statusCode: null,
      errorClass: 'timeout',
      responseBody: null,
      success: false,
    });
    expect(await complete('worker-a', d.id, T0 + 30_000, { attempt: first, state: 'pending', nextAttemptAt: T0 + 15_000, deliveredAt: null })).toBe(true);
    expect(await get(w, d.id)).toEqual({ ...d, attemptCount: 1, nextAttemptAt: T0 + 15_000, updatedAt: T0 + 10_000 });
    expect(await complete('worker-a', d.id, T0 + 30_000, { attempt: first, state: 'pending', nextAttemptAt: T0 + 15_000, deliveredAt: null })).toBe(false);
    expect(await s().queue.claim(opts('worker-a', T0 + 14_999))).toEqual([]);

    expect(await s().queue.claim(opts('worker-b', T0 + 15_000))).toHaveLength(1);
    const second = attempt(d.id, { number: 2, startedAt: T0 + 15_000, durationMs: 240, statusCode: 503, responseBody: 'upstream unavailable', success: false });
    expect(await complete('worker-b', d.id, T0 + 45_000, { attempt: second, state: 'failed', nextAttemptAt: null, deliveredAt: null })).toBe(true);
    expect(await get(w, d.id)).toMatchObject({ state: 'failed', attemptCount: 2, nextAttemptAt: null, leaseOwner: null, leaseExpiresAt: null });
    expect(await attempts(d.id)).toEqual([first, second]);

    await s().transaction((tx) =>
      tx.deliveries.restart({ id: d.id, environmentId: w.env.id, endpointId: w.ep.id, endpointVersion: 1, url: w.ep.url, now: T0 + 60_000 }),
    );
    expect(await s().queue.claim(opts('worker-a', T0 + 60_000))).toHaveLength(1);
    const third = attempt(d.id, { cycle: 2, number: 1, startedAt: T0 + 60_000, durationMs: 95 });
    expect(await complete('worker-a', d.id, T0 + 90_000, { attempt: third, state: 'delivered', nextAttemptAt: null, deliveredAt: T0 + 60_095 })).toBe(true);
    expect(await get(w, d.id)).toMatchObject({ state: 'delivered', attemptCount: 1, cycle: 2, nextAttemptAt: null, deliveredAt: T0 + 60_095, leaseOwner: null });
    expect(await attempts(d.id)).toEqual([first, second, third]);
    expect(await s().queue.claim(opts('worker-a', T0 + 10_000_000))).toEqual([]);
  });

  it('release gives leases back at once, only the owner’s, and wakes listeners', async () => {
    const w = await world(s());
    const ds = [0, 1, 2].map((i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 10 + i }));
    await insert(s(), ...ds);
    expect(await s().queue.claim(opts('worker-a', T0))).toHaveLength(3);
    let woken = 0;
    const stop = s().onDeliveriesReady(() => woken++);
    await s().queue.release('worker-b', [ds[0]!.id]);
    expect(await s().queue.claim(opts('worker-b', T0))).toEqual([]);
    await s().queue.release('worker-a', [ds[0]!.id, ds[1]!.id]);
    await until(() => woken >= 1, 'woken >= 1');
    stop();
    expect(await get(w, ds[0]!.id)).toEqual(ds[0]);
    expect((await s().queue.claim(opts('worker-b', T0))).map((c) => c.delivery.id)).toEqual([ds[0]!.id, ds[1]!.id]);
    await s().queue.release('worker-a', []);
  });

  it('a delivery disabled while in flight stays disabled; the attempt is still stored', async () => {
    const w = await world(s());
    const d = deliveryRecord(w.event, w.ep);
    await insert(s(), d);
    expect(await s().queue.claim(opts('worker-a', T0))).toHaveLength(1);
    expect(await s().transaction((tx) => tx.deliveries.disableOlderVersions(w.ep.id, 2, T0 + 50))).toBe(1);
    const a = attempt(d.id, { statusCode: 500, success: false, responseBody: 'oops' });
    expect(await complete('worker-a', d.id, T0 + 30_000, { attempt: a, state: 'pending', nextAttemptAt: T0 + 5000, deliveredAt: null })).toBe(true);
    expect(await get(w, d.id)).toMatchObject({ state: 'disabled', attemptCount: 1, nextAttemptAt: null, leaseOwner: null, leaseExpiresAt: null, deliveredAt: null });
    expect(await attempts(d.id)).toEqual([a]);
    expect(await s().queue.claim(opts('worker-a', T0 + 1_000_000))).toEqual([]);
    expect(await s().queue.nextDueAt()).toBeNull();
  });

  it('nextDueAt is the earliest pending due time, counting live leases until they expire', async () => {
    const w = await world(s());
    expect(await s().queue.nextDueAt()).toBeNull();
    const soon = deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 + 1000 });
    const later = deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 + 5000 });
    const done = deliveryRecord(w.event, w.ep, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0 });
    const dead = deliveryRecord(w.event, w.ep, { state: 'failed', nextAttemptAt: T0 - 1 });
    await insert(s(), later, soon, done, dead);
    expect(await s().queue.nextDueAt()).toBe(T0 + 1000);
    expect(await s().queue.claim(opts('worker-a', T0 + 1000, { leaseMs: 60_000 }))).toHaveLength(1);
    expect(await s().queue.nextDueAt()).toBe(T0 + 5000);
    expect(await s().queue.claim(opts('worker-a', T0 + 5000, { leaseMs: 60_000 }))).toHaveLength(1);
    expect(await s().queue.nextDueAt()).toBe(T0 + 61_000);
  });
  it('completeAndClaim records a batch in one call, each only under its own lease', async () => {
    const w = await world(s());
    const ds = [0, 1, 2, 3].map((i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 10 + i }));
    await insert(s(), ...ds);
    const claimed = await s().queue.claim(opts('worker-a', T0));
    expect(claimed.map((c) => c.delivery.leaseExpiresAt)).toEqual([T0 + 30_000, T0 + 30_000, T0 + 30_000, T0 + 30_000]);
    // ds[3]'s lease was taken over by worker-b (released, then claimed by b).
    await s().queue.release('worker-a', [ds[3]!.id]);
    expect(await s().queue.claim(opts('worker-b', T0))).toHaveLength(1);
    const done = (d: DeliveryRecord, o: { leaseExpiresAt?: number; success?: boolean } = {}) => ({
      deliveryId: d.id,
      leaseExpiresAt: o.leaseExpiresAt ?? T0 + 30_000,
      result:
        o.success === false
          ? { attempt: attempt(d.id, { statusCode: 500, success: false, responseBody: 'no' }), state: 'pending' as const, nextAttemptAt: T0 + 5_000, deliveredAt: null }
          : { attempt: attempt(d.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 183 },
    });
    const { applied } = await s().queue.completeAndClaim('worker-a', [
      done(ds[0]!),
      done(ds[1]!, { success: false }),
      done(ds[2]!, { leaseExpiresAt: T0 + 29_999 }), // not the lease the claim gave: refused
      done(ds[3]!), // taken over: refused
    ], null);
    expect(applied).toEqual([true, true, false, false]);
    expect(await get(w, ds[0]!.id)).toMatchObject({ state: 'delivered', attemptCount: 1, leaseOwner: null, deliveredAt: T0 + 183 });
    expect(await get(w, ds[1]!.id)).toMatchObject({ state: 'pending', attemptCount: 1, nextAttemptAt: T0 + 5_000, leaseOwner: null });
    expect(await get(w, ds[2]!.id)).toMatchObject({ state: 'pending', attemptCount: 0, leaseOwner: 'worker-a' });
    expect(await get(w, ds[3]!.id)).toMatchObject({ state: 'pending', attemptCount: 0, leaseOwner: 'worker-b' });
    expect(await attempts(ds[0]!.id)).toHaveLength(1);
    expect(await attempts(ds[1]!.id)).toHaveLength(1);
    expect(await attempts(ds[2]!.id)).toEqual([]);
    expect(await attempts(ds[3]!.id)).toEqual([]);
    expect(await s().queue.completeAndClaim('worker-a', [], null)).toEqual({ applied: [], claimed: [], claimError: null });
  });

  it('completeAndClaim records the batch, then claims into the room it freed, in one call', async () => {
    const w = await world(s());
    const ds = [0, 1, 2, 3, 4].map((i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 10 + i }));
    await insert(s(), ...ds);
    const first = await s().queue.claim(opts('worker-a', T0, { perEndpointLimit: 2, exclusive: true }));
    expect(first.map((c) => c.delivery.id)).toEqual([ds[0]!.id, ds[1]!.id]);
    const done = (c: (typeof first)[number]) => ({
      deliveryId: c.delivery.id,
      leaseExpiresAt: c.delivery.leaseExpiresAt!,
      result: { attempt: attempt(c.delivery.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 183 },
    });
    // The destination is at its limit of 2: only the lease ds[0]'s completion frees can be claimed.
    const r = await s().queue.completeAndClaim('worker-a', [done(first[0]!)], opts('worker-a', T0 + 200, { perEndpointLimit: 2, exclusive: true }));
    expect(r.applied).toEqual([true]);
    expect(r.claimError).toBeNull();
    expect(r.claimed.map((c) => c.delivery.id)).toEqual([ds[2]!.id]);
    expect(r.claimed[0]!.event.id).toBe(w.event.id);
    expect(await get(w, ds[0]!.id)).toMatchObject({ state: 'delivered', leaseOwner: null });
    expect(await get(w, ds[2]!.id)).toMatchObject({ state: 'pending', leaseOwner: 'worker-a', leaseExpiresAt: T0 + 30_200 });
    expect(await attempts(ds[0]!.id)).toHaveLength(1);
    // Without claim options it only records; a lost lease is refused.
    const alone = await s().queue.completeAndClaim('worker-b', [done(first[1]!)], null);
    expect(alone).toEqual({ applied: [false], claimed: [], claimError: null });
    expect(await attempts(ds[1]!.id)).toEqual([]);
  });

  it('a completion keeps a delivery disabled while in flight disabled, and stores the attempt', async () => {
    const w = await world(s());
    const d = deliveryRecord(w.event, w.ep);
    await insert(s(), d);
    const [c] = await s().queue.claim(opts('worker-a', T0));
    await s().transaction((tx) => tx.deliveries.disableOlderVersions(w.ep.id, 2, T0 + 50));
    const a = attempt(d.id, { statusCode: 500, success: false });
    expect(await complete('worker-a', d.id, c!.delivery.leaseExpiresAt!, { attempt: a, state: 'pending', nextAttemptAt: T0 + 5000, deliveredAt: null })).toBe(true);
    expect(await get(w, d.id)).toMatchObject({ state: 'disabled', attemptCount: 1, nextAttemptAt: null, leaseOwner: null });
    expect(await attempts(d.id)).toEqual([a]);
  });

  it('an exclusive claim skips destinations another owner holds a live lease on, and may hold more than the send limit', async () => {
    const w = await world(s());
    const toEndpoint = Array.from({ length: 6 }, (_, i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 100 + i }));
    const toUrl = Array.from({ length: 2 }, (_, i) => deliveryRecord(w.event, null, { nextAttemptAt: T0 - 50 + i }));
    await insert(s(), ...toEndpoint, ...toUrl);
    const a = await s().queue.claim(opts('worker-a', T0, { perEndpointLimit: 3, limit: 3, exclusive: true }));
    expect(a.map((c) => c.delivery.id)).toEqual([toEndpoint[0]!.id, toEndpoint[1]!.id, toEndpoint[2]!.id]);
    // worker-b may not touch the endpoint worker-a serves; the callback url is free.
    const b = await s().queue.claim(opts('worker-b', T0, { perEndpointLimit: 3, exclusive: true }));
    expect(b.map((c) => c.delivery.id)).toEqual([toUrl[0]!.id, toUrl[1]!.id]);
    // worker-a tops up to its own cap on its endpoint.
    const more = await s().queue.claim(opts('worker-a', T0, { perEndpointLimit: 5, exclusive: true }));
    expect(more.map((c) => c.delivery.id)).toEqual([toEndpoint[3]!.id, toEndpoint[4]!.id]);
    // Once worker-a's leases are gone (expired), worker-b may serve the endpoint. (Its second
    // claim at T0 may lease 1 ms longer: on PostgreSQL an owner's lease ends strictly increase.)
    const after = await s().queue.claim(opts('worker-b', T0 + 30_001, { perEndpointLimit: 10, exclusive: true, leaseMs: 60_000 }));
    expect(after.filter((c) => c.delivery.endpointId === w.ep.id).map((c) => c.delivery.id)).toEqual(toEndpoint.map((d) => d.id));
  });

  it("a claim carries the endpoint's rate cap as it is at the claim; none for an uncapped endpoint or a payout callback", async () => {
    const w = await world(s());
    const d = deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 });
    const callback = deliveryRecord(w.event, null, { nextAttemptAt: T0 });
    await insert(s(), d, callback);
    expect((await s().queue.claim(opts('worker-a', T0))).map((c) => c.maxPerSecond)).toEqual([undefined, undefined]);
    await s().queue.release('worker-a', [d.id, callback.id]);
    await s().transaction((tx) => tx.endpoints.update({ ...w.ep, maxPerSecond: 20 }));
    expect((await s().transaction((tx) => tx.endpoints.get(w.env.id, w.ep.id)))?.maxPerSecond).toBe(20);
    const claimed = await s().queue.claim(opts('worker-b', T0));
    expect(Object.fromEntries(claimed.map((c) => [c.delivery.id, c.maxPerSecond]))).toEqual({ [d.id]: 20, [callback.id]: undefined });
  });

  it('a paused destination is claimed by no owner, in any claim step, until its pause ends; a shorter pause keeps the longer one', async () => {
    const w = await world(s());
    const toEndpoint = Array.from({ length: 3 }, (_, i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 100 + i }));
    const callback = deliveryRecord(w.event, null, { nextAttemptAt: T0 - 50 });
    await insert(s(), ...toEndpoint, callback);
    await s().queue.pause(`e:${w.ep.id}`, T0 + 2_000);
    await s().queue.pause(`e:${w.ep.id}`, T0 + 1_000);
    const ids = (cs: Array<{ delivery: { id: string } }>) => cs.map((c) => c.delivery.id);
    // The window step, and the by-destination step (a full window of 1 row) skip it alike.
    expect(ids(await s().queue.claim(opts('worker-a', T0, { exclusive: true })))).toEqual([callback.id]);
    expect(await s().queue.claim(opts('worker-b', T0 + 1_999, { limit: 2, exclusive: true }))).toEqual([]);
    expect(ids(await s().queue.claim(opts('worker-b', T0 + 2_000, { exclusive: true })))).toEqual(toEndpoint.map((d) => d.id));
  });

  it('a spread claim takes on new destinations only as far as their send slots are wanted, and leaves the rest to other owners', async () => {
    const w = await world(s());
    const second = endpointRecord(w.env, { url: 'https://second.northwind.example/hooks', active: false });
    await s().transaction((tx) => tx.endpoints.insert(second));
    // Due in turn: first endpoint, second endpoint, callback url, five rounds (the url only two).
    const first = Array.from({ length: 5 }, (_, i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 100 + i * 3 }));
    const other = Array.from({ length: 5 }, (_, i) => deliveryRecord(w.event, second, { nextAttemptAt: T0 - 99 + i * 3 }));
    const url = Array.from({ length: 2 }, (_, i) => deliveryRecord(w.event, null, { nextAttemptAt: T0 - 98 + i * 3 }));
    await insert(s(), ...first, ...other, ...url);
    const ids = (cs: { delivery: { id: string } }[]) => cs.map((c) => c.delivery.id);
    const spread = (slots: number) => ({ ...opts('', T0, { exclusive: true }), spread: { slots, perDestination: 4 } });
    // Four slots wanted: the earliest due destination covers them; it is taken whole (prefetch).
    expect(ids(await s().queue.claim({ ...spread(4), owner: 'worker-a' }))).toEqual(first.map((d) => d.id));
    // worker-b may not touch it, and takes the next one.
    expect(ids(await s().queue.claim({ ...spread(4), owner: 'worker-b' }))).toEqual(other.map((d) => d.id));
    // No slot wanted: nothing new, however much is due.
    expect(await s().queue.claim({ ...spread(0), owner: 'worker-a' })).toEqual([]);
    // One slot wanted: the url, both of its deliveries.
    expect(ids(await s().queue.claim({ ...spread(1), owner: 'worker-a' }))).toEqual(url.map((d) => d.id));
  });

  it('a spread claim tops up the destinations its owner holds whatever the slots, and counts a new one by its due deliveries', async () => {
    const w = await world(s());
    const second = endpointRecord(w.env, { url: 'https://second.northwind.example/hooks', active: false });
    await s().transaction((tx) => tx.endpoints.insert(second));
    const held = Array.from({ length: 4 }, (_, i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 100 + i }));
    await insert(s(), ...held);
    expect(await s().queue.claim({ ...opts('worker-a', T0, { exclusive: true, limit: 2 }), spread: { slots: 4, perDestination: 4 } })).toHaveLength(2);
    // One due delivery on the second endpoint counts one slot (not four), one on the url
    // another: with two slots wanted both are taken, and the held endpoint is topped up besides.
    const one = deliveryRecord(w.event, second, { nextAttemptAt: T0 - 50 });
    const cb = deliveryRecord(w.event, null, { nextAttemptAt: T0 - 40 });
    await insert(s(), one, cb);
    // No slot wanted: the held endpoint only, up to the limit.
    const topUp = await s().queue.claim({ ...opts('worker-a', T0, { exclusive: true, limit: 1 }), spread: { slots: 0, perDestination: 4 } });
    expect(topUp.map((c) => c.delivery.id)).toEqual([held[2]!.id]);
    const more = await s().queue.claim({ ...opts('worker-a', T0, { exclusive: true }), spread: { slots: 2, perDestination: 4 } });
    expect(more.map((c) => c.delivery.id)).toEqual([held[3]!.id, one.id, cb.id]);
    // Another owner's spread never tops up worker-a's endpoint.
    expect(await s().queue.claim({ ...opts('worker-b', T0, { exclusive: true }), spread: { slots: 0, perDestination: 4 } })).toEqual([]);
  });

  it('a destination at its limit with a long backlog does not hide due deliveries of other destinations', async () => {
    const w = await world(s());
    const other = endpointRecord(w.env, { url: 'https://other.northwind.example/hooks', active: false });
    await s().transaction((tx) => tx.endpoints.insert(other));
    // 300 due deliveries to the busy endpoint come first in due order; one to another endpoint after them.
    const busy = Array.from({ length: 300 }, (_, i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 1000 + i }));
    const late = deliveryRecord(w.event, other, { nextAttemptAt: T0 });
    await insert(s(), ...busy, late);
    expect(await s().queue.claim(opts('worker-a', T0, { perEndpointLimit: 2, limit: 2 }))).toHaveLength(2);
    // The busy endpoint is at its limit: the claim still finds the other endpoint's delivery.
    expect((await s().queue.claim(opts('worker-a', T0, { perEndpointLimit: 2, limit: 10 }))).map((c) => c.delivery.id)).toEqual([late.id]);
  });

  it('one claim shape on every store: the spread is shared by both steps, past any window, and leases read back as claimed', async () => {
    const w = await world(s());
    // A: the endpoint, with a backlog longer than either store's first-step window (at most 200
    // rows for a claim of 10), due first; then three callback urls B, C, D.
    const a = Array.from({ length: 300 }, (_, i) => deliveryRecord(w.event, w.ep, { nextAttemptAt: T0 - 1000 + i }));
    const cb = (host: string, n: number, from: number) =>
      Array.from({ length: n }, (_, i) => deliveryRecord(w.event, null, { url: `https://${host}.northwind.example/callbacks`, nextAttemptAt: from + i }));
    const [b, c, d] = [cb('b', 3, T0 - 600), cb('c', 2, T0 - 500), cb('d', 2, T0 - 400)];
    await insert(s(), ...a, ...b, ...c, ...d);
    const ids = (cs: { delivery: { id: string } }[]) => cs.map((x) => x.delivery.id);
    const claim = (owner: string, now: number, slots: number) => ({ ...opts(owner, now, { limit: 10, perEndpointLimit: 2, exclusive: true }), spread: { slots, perDestination: 2 } });
    // Three slots: A (its room of 2) from the window, which A's backlog fills; the one slot
    // left goes to B in the scan by destination (2 more); C would pass the three.
    const first = await s().queue.claim(claim('worker-a', T0, 3));
    expect(ids(first)).toEqual([a[0]!.id, a[1]!.id, b[0]!.id, b[1]!.id]);
    expect(first.map((x) => [x.delivery.leaseOwner, x.delivery.leaseExpiresAt])).toEqual(Array.from({ length: 4 }, () => ['worker-a', T0 + 30_000]));
    for (const x of first) expect(await get(w, x.delivery.id)).toEqual(x.delivery);
    // Another owner skips what worker-a serves: C, then D (2 + 2 slots, D starting below 3).
    expect(ids(await s().queue.claim(claim('worker-b', T0, 3)))).toEqual([c[0]!.id, c[1]!.id, d[0]!.id, d[1]!.id]);
    // No slot: only worker-a's own destinations, which are at their limit.
    expect(await s().queue.claim(claim('worker-a', T0, 0))).toEqual([]);
    // A completion frees room on A; the claim riding with it tops A up, nothing new.
    const done = { attempt: attempt(a[0]!.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 + 183 };
    const r = await s().queue.completeAndClaim('worker-a', [{ deliveryId: a[0]!.id, leaseExpiresAt: T0 + 30_000, result: done }], claim('worker-a', T0 + 200, 0));
    expect([r.applied, ids(r.claimed), r.claimed[0]!.delivery.leaseExpiresAt]).toEqual([[true], [a[2]!.id], T0 + 30_200]);
    // Once every lease has expired, a new owner takes them over under the same rule.
    expect(ids(await s().queue.claim(claim('worker-c', T0 + 30_200, 5)))).toEqual([a[1]!.id, a[2]!.id, b[0]!.id, b[1]!.id, c[0]!.id, c[1]!.id]);
  });
}
