// The webhook management API over HTTP: the activity list (pages, search, detail) and manual retries.
import { beforeAll, describe, expect, it } from 'vitest';
import { type TestTenant } from '../testing/harness.ts';
import { setupServer, ISO, server, hookUrl, ok, expectProblem, createEndpoint, patch, createOrder, allDeliveries, deliveryOfOrder, getDelivery, failDelivery, type Delivery } from './testing/management.ts';

setupServer();

describe('GET /v2/webhooks/deliveries', () => {
  let t: TestTenant;
  const refs: string[] = [];
  const orders: string[] = [];

  beforeAll(async () => {
    t = await server.newTenant();
    await createEndpoint(t.management);
    for (let i = 1; i <= 12; i++) {
      refs.push(`cart-78${String(i).padStart(2, '0')}`);
      orders.push(await createOrder(t, refs[i - 1]));
    }
  });

  it('pages five at a time, newest first, with a cursor to "Load 5 more" and no duplicates', async () => {
    const m = t.management;
    const seen: Delivery[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const body = ok(await m.GET('/v2/webhooks/deliveries', { params: { query: cursor ? { cursor } : {} } }));
      sizes.push(body.data.length);
      seen.push(...body.data);
      if (body.nextCursor === null) break;
      expect(body.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      cursor = body.nextCursor;
    }
    expect(sizes).toEqual([5, 5, 2]);
    expect(new Set(seen.map((d) => d.id)).size).toBe(12);
    expect(seen.map((d) => d.merchantReference)).toEqual([...refs].reverse());
    expect(seen.map((d) => d.orderId)).toEqual([...orders].reverse());
    for (const d of seen) {
      expect(d).toMatchObject({ kind: 'order_event', eventType: 'order.created', state: 'pending', transactionId: null, maxAttempts: 10, cycle: 1 });
      expect(['queued', 'sending', 'retrying']).toContain(d.progress);
    }
    for (let i = 1; i < seen.length; i++) expect(Date.parse(seen[i - 1]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(seen[i]!.createdAt));

    // Other limits page the same sequence.
    const big = ok(await m.GET('/v2/webhooks/deliveries', { params: { query: { limit: 100 } } }));
    expect(big.data.map((d) => d.id)).toEqual(seen.map((d) => d.id));
    expect(big.nextCursor).toBeNull();
  });

  it('searches by exact order id, merchant reference or event id; a near miss finds nothing', async () => {
    const m = t.management;
    const byOrder = await allDeliveries(m, orders[0]);
    expect(byOrder.map((d) => d.orderId)).toEqual([orders[0]]);
    // cart-7801 is a prefix of no other reference, but cart-780 is a prefix of nine of them.
    expect((await allDeliveries(m, 'cart-7801')).map((d) => d.merchantReference)).toEqual(['cart-7801']);
    expect(await allDeliveries(m, 'cart-780')).toEqual([]);
    expect(await allDeliveries(m, 'CART-7801')).toEqual([]);
    const byEvent = await allDeliveries(m, byOrder[0]!.eventId);
    expect(byEvent.map((d) => d.id)).toEqual([byOrder[0]!.id]);
    expect(await allDeliveries(m, byOrder[0]!.eventId.slice(0, 63))).toEqual([]);
    const nearMiss = `${orders[0]!.slice(0, -1)}${orders[0]!.endsWith('0') ? '1' : '0'}`;
    expect(await allDeliveries(m, nearMiss)).toEqual([]);
    expect(await allDeliveries(m, orders[0]!.toUpperCase())).toEqual([]);

    // A search pages like the list.
    const again = await createOrder(t, 'cart-7801');
    const first = ok(await m.GET('/v2/webhooks/deliveries', { params: { query: { q: 'cart-7801', limit: 1 } } }));
    expect(first.data.map((d) => d.orderId)).toEqual([again]);
    const second = ok(await m.GET('/v2/webhooks/deliveries', { params: { query: { q: 'cart-7801', limit: 1, cursor: first.nextCursor! } } }));
    expect(second.data.map((d) => d.orderId)).toEqual([orders[0]]);
    expect(second.nextCursor).toBeNull();
  });

  it('refuses a cursor it did not issue and out-of-range limits (400 validation-failed)', async () => {
    const m = t.management;
    for (const cursor of ['bm90LWEtY3Vyc29y', 'AAAA', 'MDAx']) {
      const r = await m.GET('/v2/webhooks/deliveries', { params: { query: { cursor } } });
      const problem = expectProblem(r, 400, 'validation-failed');
      expect(problem.errors).toEqual([{ pointer: '/query/cursor', detail: 'is not a valid cursor' }]);
    }
    for (const limit of [0, 101]) expectProblem(await m.GET('/v2/webhooks/deliveries', { params: { query: { limit } } }), 400, 'validation-failed');
    expectProblem(await m.GET('/v2/webhooks/deliveries', { params: { query: { q: '' } } }), 400, 'validation-failed');
  });
});

describe('GET /v2/webhooks/deliveries/{deliveryId}', () => {
  it('answers every attempt newest first, the last response and the exact payload of the event', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const endpoint = await createEndpoint(m);
    const orderId = await createOrder(t, 'cart-7834');
    const d = await deliveryOfOrder(m, orderId);
    await failDelivery(m, d.id);

    const detail = await getDelivery(m, d.id);
    expect(detail).toMatchObject({
      id: d.id,
      kind: 'order_event',
      eventId: d.eventId,
      eventType: 'order.created',
      endpointId: endpoint.id,
      endpointVersion: 1,
      url: hookUrl(),
      state: 'failed',
      progress: 'failed',
      attemptCount: 10,
      cycle: 1,
      maxAttempts: 10,
      nextAttemptAt: null,
      deliveredAt: null,
      orderId,
      merchantReference: 'cart-7834',
      transactionId: null,
    });
    expect(detail.attempts.map((a) => [a.cycle, a.number])).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1].map((n) => [1, n]));
    expect(detail.lastResponse).toEqual(detail.attempts[0]);
    expect(detail.attempts[0]).toEqual({
      number: 10,
      cycle: 1,
      startedAt: expect.stringMatching(ISO),
      durationMs: 12,
      signatureTimestamp: expect.any(Number),
      outcome: 'response',
      statusCode: 503,
      errorClass: null,
      responseBody: '{"error":"maintenance"}',
      success: false,
    });

    // The payload is the event of the feed, byte for byte what was signed.
    const feed = ok(await t.orders.GET('/v2/events', { params: { query: { limit: 100 } } }));
    const event = feed.data.find((e) => e.id === d.eventId);
    expect(event).toBeDefined();
    expect(detail.payload).toEqual(event);
    expect(detail.payload).toMatchObject({ id: d.eventId, type: 'order.created', apiVersion: 'v2', data: { orderId, merchantReference: 'cart-7834' } });

    // The list shows the same delivery without attempts and payload.
    const [listed] = await allDeliveries(m, orderId);
    const { attempts: _attempts, payload: _payload, ...base } = detail;
    expect(listed).toEqual(base);

    expectProblem(await m.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId: 'dlv_01JD9Z1A2B3C4D5E6F7G8H9J0K' } } }), 404, 'not-found');
  });
});


describe('POST /v2/webhooks/deliveries/{deliveryId}/retry', () => {
  it('refuses a delivery that is not failed (409 delivery-not-retryable)', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const endpoint = await createEndpoint(m);
    const pending = await deliveryOfOrder(m, await createOrder(t));
    const r = await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: pending.id } } });
    expect(expectProblem(r, 409, 'delivery-not-retryable').detail).toContain('pending');

    ok(await patch(m, endpoint.id, { url: hookUrl('/v2') }));
    const disabled = await getDelivery(m, pending.id);
    expect(disabled.state).toBe('disabled');
    const again = await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: pending.id } } });
    expect(expectProblem(again, 409, 'delivery-not-retryable').detail).toContain('disabled');
    expect((await getDelivery(m, pending.id)).state).toBe('disabled');
  });

  it('restarts a failed delivery in a new cycle to the current endpoint, with the original event id and payload', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const endpoint = await createEndpoint(m);
    const orderId = await createOrder(t, 'cart-7834');
    const d = await deliveryOfOrder(m, orderId);
    await failDelivery(m, d.id);
    const before = await getDelivery(m, d.id);

    // A URL edit leaves failed deliveries failed; the retry goes to the new URL and version.
    const edited = ok(await patch(m, endpoint.id, { url: hookUrl('/webhooks-v2') }));
    expect((await getDelivery(m, d.id)).state).toBe('failed');

    const retried = ok(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } }));
    expect(retried).toEqual({
      ...before,
      attempts: undefined,
      payload: undefined,
      endpointId: endpoint.id,
      endpointVersion: edited.version,
      url: hookUrl('/webhooks-v2'),
      state: 'pending',
      progress: 'queued',
      attemptCount: 0,
      cycle: 2,
      nextAttemptAt: retried.updatedAt,
      updatedAt: expect.stringMatching(ISO),
      lastResponse: before.lastResponse,
    });
    expect(retried.eventId).toBe(d.eventId);

    const after = await getDelivery(m, d.id);
    expect(after.payload).toEqual(before.payload);
    expect(after.cycle).toBe(2);
    // The first cycle's attempts stay in the history.
    expect(after.attempts.filter((a) => a.cycle === 1)).toEqual(before.attempts);

    // Only once: it is no longer failed.
    expectProblem(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } }), 409, 'delivery-not-retryable');
  });

  it('needs an active endpoint for order and test deliveries, and then uses the newest one', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const old = await createEndpoint(m);
    const order = await deliveryOfOrder(m, await createOrder(t));
    const test = ok(await m.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: old.id } } }), 201);
    await failDelivery(m, order.id);
    await failDelivery(m, test.id);
    ok(await patch(m, old.id, { active: false }));

    for (const d of [order, test]) {
      const r = await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } });
      expect(expectProblem(r, 409, 'delivery-not-retryable').detail).toContain('has no active webhook endpoint');
      expect((await getDelivery(m, d.id)).state).toBe('failed');
    }

    const current = await createEndpoint(m, hookUrl('/new-home'));
    for (const d of [order, test]) {
      const retried = ok(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } }));
      expect(retried).toMatchObject({ id: d.id, kind: d.kind, eventId: d.eventId, endpointId: current.id, endpointVersion: 1, url: hookUrl('/new-home'), state: 'pending', cycle: 2, attemptCount: 0 });
    }
  });

  it('retries a failed payout callback to its notifyUrl without any endpoint', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const notifyUrl = hookUrl('/payouts/completed');
    const payout = await t.transactions.POST('/transactions/payout', { body: { thirdPartyId: 'merchant-payout-2026-000183', userId: 'user_5521', amount: 150.25, notifyUrl } });
    expect(payout.response.status).toBe(201);
    const transactionId = payout.data!.transactionId;
    const settled = await t.sandbox.POST('/sandbox/payouts/{transactionId}/settle', { params: { path: { transactionId } }, body: { status: 'success' } });
    expect(settled.response.status).toBe(200);

    const [callback, ...rest] = await allDeliveries(m);
    expect(rest).toEqual([]);
    expect(callback).toMatchObject({ kind: 'payout_callback', eventType: 'payout.completed', endpointId: null, endpointVersion: null, url: notifyUrl, transactionId, orderId: null, merchantReference: null });
    expect((await getDelivery(m, callback!.id)).payload).toEqual({ transactionId, thirdPartyId: 'merchant-payout-2026-000183', amount: 150.25, status: 'success' });

    // Rotating the callback secret does not disable a pending callback.
    ok(await m.POST('/v2/webhooks/callback-secret/rotate'));
    expect((await getDelivery(m, callback!.id)).state).toBe('pending');

    await failDelivery(m, callback!.id);
    const retried = ok(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: callback!.id } } }));
    expect(retried).toMatchObject({ kind: 'payout_callback', eventId: callback!.eventId, endpointId: null, endpointVersion: null, url: notifyUrl, state: 'pending', progress: 'queued', cycle: 2, attemptCount: 0 });
  });
});
