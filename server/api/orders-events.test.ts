// The v2 order API's events feed (paging, filters, what never appears in it) and the outbox:
// one delivery per event, written with it, and nothing written for a refused change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordPayoutCallback, recordTestEvent } from '../domain/events.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { allEvents, orderEventsOf, deposit, HEX64, ISO, type Order, type OrderEvent, orderTesting, receiver, txHash, USD_ONLY, WITH_TOKEN } from './testing/orders.ts';
import { expectProblem, keyOf, sendRaw } from '../testing/raw-http.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});
const { createOrder, deliveries, insertActiveEndpoint } = orderTesting(() => server, WITH_TOKEN);

describe('GET /v2/events', () => {
  it('pages newest first with limit and cursor, without duplicates or gaps', async () => {
    const t = await server.newTenant();
    const created: Order[] = [];
    for (let i = 0; i < 12; i++) created.push(await createOrder(t, { ...USD_ONLY, merchantReference: `cart-${8000 + i}` }));

    const pages: OrderEvent[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const r = await t.orders.GET('/v2/events', { params: { query: { limit: 5, ...(cursor ? { cursor } : {}) } } });
      expect(r.response.status).toBe(200);
      pages.push(orderEventsOf(r.data!.data));
      if (r.data!.nextCursor === null) break;
      expect(r.data!.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      cursor = r.data!.nextCursor;
    }
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    const events = pages.flat();
    expect(new Set(events.map((e) => e.id)).size).toBe(12);
    for (const e of events) {
      expect(e.id).toMatch(HEX64);
      expect(e.createdAt).toMatch(ISO);
      expect(e.apiVersion).toBe('v2');
    }
    // Newest first: exactly the creations, in reverse.
    expect(events.map((e) => e.data.orderId)).toEqual(created.map((o) => o.orderId).reverse());
    const times = events.map((e) => Date.parse(e.createdAt));
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThanOrEqual(times[i - 1]!);

    // The default page size is 20.
    const whole = await t.orders.GET('/v2/events');
    expect(whole.data!.data).toHaveLength(12);
    expect(whole.data!.nextCursor).toBeNull();
  });

  it('filters by type, and lists order events only', async () => {
    const t = await server.newTenant();
    const paid = await createOrder(t, { ...WITH_TOKEN, amountBaseUnits: '100' });
    const reviewed = await createOrder(t);
    await createOrder(t, USD_ONLY);
    await deposit(t, paid.orderId, '100');
    await t.sandbox.POST('/sandbox/orders/{orderId}/review', { params: { path: { orderId: reviewed.orderId } }, body: { reason: 'deposit_revoked' } });

    // A webhook.test event and a payout callback are events of the environment, never of the feed.
    const env = await server.environmentId(t.tenantId);
    const rx = await receiver();
    try {
      const endpoint = await insertActiveEndpoint(env, rx.url);
      const scope = { tenantId: t.tenantId, environmentId: env, environment: 'test' as const };
      await server.services.store.transaction(async (tx) => {
        await recordTestEvent(tx, server.services, scope, endpoint);
        await recordPayoutCallback(tx, server.services, scope, {
          transactionId: 'txn_01JD4W9Q6S2V5K8X3M7N0PBRT4',
          thirdPartyId: 'merchant-payout-2026-000183',
          amount: '150.25',
          status: 'success',
          notifyUrl: rx.url,
        });
      });
    } finally {
      await rx.close();
    }

    const all = await allEvents(t);
    expect(all.map((e) => e.type)).toEqual(['order.payment_review_required', 'order.paid', 'order.created', 'order.created', 'order.created']);
    const onlyPaid = await allEvents(t, { type: 'order.paid' });
    expect(onlyPaid).toHaveLength(1);
    expect(onlyPaid[0]!.data).toMatchObject({ orderId: paid.orderId, status: 'paid', receivedBaseUnits: '100' });
    const onlyReview = await allEvents(t, { type: 'order.payment_review_required' });
    expect(onlyReview.map((e) => e.data)).toEqual([expect.objectContaining({ orderId: reviewed.orderId, status: 'review_required', reviewReason: 'deposit_revoked' })]);
    expect(await allEvents(t, { type: 'order.created', limit: 2 })).toHaveLength(3);
  });

  it('answers 400 validation-failed for a malformed cursor, a bad limit or an unknown type', async () => {
    const t = await server.newTenant();
    for (let i = 0; i < 3; i++) await createOrder(t);
    const forged = Buffer.from('not-a-cursor').toString('base64url');
    const padded = `${(await t.orders.GET('/v2/events', { params: { query: { limit: 1 } } })).data!.nextCursor}A`;
    // A cursor GET /v2/webhooks/deliveries issued: well formed, but another list's.
    const rx = await receiver();
    let ofDeliveries: string;
    try {
      await insertActiveEndpoint(await server.environmentId(t.tenantId), rx.url);
      for (let i = 0; i < 2; i++) await createOrder(t);
      ofDeliveries = (await t.management.GET('/v2/webhooks/deliveries', { params: { query: { limit: 1 } } })).data!.nextCursor!;
    } finally {
      await rx.close();
    }
    expect(ofDeliveries).toEqual(expect.any(String));
    for (const cursor of [forged, 'MA', padded, 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', ofDeliveries]) {
      const r = await sendRaw(server.url, keyOf(t), 'GET', `/v2/events?cursor=${cursor}`);
      expectProblem(r, 400, 'validation-failed');
      expect(r.body.errors).toEqual([{ pointer: '/query/cursor', detail: expect.any(String) }]);
    }
    for (const [query, pointer] of [
      ['cursor=%25%25', '/query/cursor'],
      ['limit=0', '/query/limit'],
      ['limit=101', '/query/limit'],
      ['limit=2.5', '/query/limit'],
      ['limit=ten', '/query/limit'],
      ['type=webhook.test', '/query/type'],
      ['type=payout.completed', '/query/type'],
    ] as const) {
      const r = await sendRaw(server.url, keyOf(t), 'GET', `/v2/events?${query}`);
      expectProblem(r, 400, 'validation-failed');
      expect((r.body.errors as Array<{ pointer: string }>).map((e) => e.pointer)).toContain(pointer);
    }
  });
});

describe('the outbox', () => {
  it('prepares exactly one delivery per event, in the same transaction, only while an endpoint is active', async () => {
    const t = await server.newTenant();
    const env = await server.environmentId(t.tenantId);
    const before = await createOrder(t);
    expect(await deliveries(env)).toEqual([]);

    const rx = await receiver();
    try {
      const endpoint = await insertActiveEndpoint(env, rx.url);
      const order = await createOrder(t, { ...WITH_TOKEN, amountBaseUnits: '1000' });
      await deposit(t, order.orderId, '400'); // partially_paid: no event
      await deposit(t, order.orderId, '600'); // paid: order.paid
      await deposit(t, order.orderId, '50'); // surplus: no event
      await deposit(t, order.orderId, '70', false); // unverified: no event
      await t.sandbox.POST('/sandbox/orders/{orderId}/review', { params: { path: { orderId: order.orderId } }, body: { reason: 'late_or_missing_inclusion' } });
      await t.sandbox.POST('/sandbox/orders/{orderId}/cancel', { params: { path: { orderId: order.orderId } } }); // no event

      const events = (await allEvents(t)).filter((e) => e.data.orderId === order.orderId);
      expect(events.map((e) => e.type)).toEqual(['order.payment_review_required', 'order.paid', 'order.created']);
      const rows = await deliveries(env, order.orderId);
      expect(rows).toHaveLength(3);
      expect(rows.map((d) => d.eventId).sort()).toEqual(events.map((e) => e.id).sort());
      for (const d of rows) {
        const event = events.find((e) => e.id === d.eventId)!;
        expect(d).toMatchObject({ kind: 'order_event', endpointId: endpoint.id, endpointVersion: 1, url: rx.url, cycle: 1, orderId: order.orderId, merchantReference: 'cart-7781' });
        // Prepared with the event (same transaction, same instant), then sent by the engine.
        expect(d.createdAt).toBe(Date.parse(event.createdAt));
        expect(['pending', 'delivered']).toContain(d.state);
      }
      // The event prepared before the endpoint existed has no delivery, and never gets one.
      expect(await deliveries(env, before.orderId)).toEqual([]);
      expect((await allEvents(t)).some((e) => e.data.orderId === before.orderId)).toBe(true);
    } finally {
      await rx.close();
    }
  });

  it('writes no event and no delivery when the change is refused', async () => {
    const t = await server.newTenant();
    const env = await server.environmentId(t.tenantId);
    const rx = await receiver();
    try {
      await insertActiveEndpoint(env, rx.url);
      const order = await createOrder(t);
      await t.sandbox.POST('/sandbox/orders/{orderId}/cancel', { params: { path: { orderId: order.orderId } } });
      const eventsBefore = await allEvents(t);
      const deliveriesBefore = await deliveries(env);
      const refused = [
        await sendRaw(server.url, keyOf(t), 'POST', `/sandbox/orders/${order.orderId}/deposits`, { text: JSON.stringify({ amountBaseUnits: '49990000', verified: true, txHash: txHash() }) }),
        await sendRaw(server.url, keyOf(t), 'POST', `/sandbox/orders/${order.orderId}/review`, { text: JSON.stringify({ reason: 'order_cancelled' }) }),
        await sendRaw(server.url, keyOf(t), 'POST', `/sandbox/orders/${order.orderId}/cancel`),
      ];
      for (const r of refused) expectProblem(r, 409, 'order-not-open');
      expect(await allEvents(t)).toEqual(eventsBefore);
      expect(await deliveries(env)).toHaveLength(deliveriesBefore.length);
      const payments = await t.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } });
      expect(payments.data!.data).toEqual([]);
    } finally {
      await rx.close();
    }
  });
});
