// The sandbox's order operations over HTTP: deposits (verified or not), reviews and
// cancellations, the payment state they move, the events they emit, the payment
// transactions they leave, their errors, and tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import type { components } from '../../generated/types/orders.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { type Clients, type CreateOrderRequest, deposit, HEX64, ISO, type Order, type OrderEvent, orderEventsOf, orderTesting, txHash } from './testing/orders.ts';
import { expectProblem, keyOf, sendRaw } from '../testing/raw-http.ts';

type ReviewReason = components['schemas']['ReviewReason'];

const UNKNOWN_ORDER = '5c8e1f3a-2b7d-4e96-8a0c-1d4f6b9e3a72';

const ORDER: CreateOrderRequest = {
  merchantReference: 'cart-7782',
  amountMinor: 12000,
  assetId: 'USDC',
  networkId: 'ethereum',
  amountBaseUnits: '120000000',
};

async function review(c: Pick<Clients, 'sandbox'>, orderId: string, reason: ReviewReason): Promise<Order> {
  const r = await c.sandbox.POST('/sandbox/orders/{orderId}/review', { params: { path: { orderId } }, body: { reason } });
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.response.status).toBe(200);
  return r.data!;
}

async function cancel(c: Pick<Clients, 'sandbox'>, orderId: string): Promise<Order> {
  const r = await c.sandbox.POST('/sandbox/orders/{orderId}/cancel', { params: { path: { orderId } } });
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.response.status).toBe(200);
  return r.data!;
}

async function getOrder(c: Pick<Clients, 'orders'>, orderId: string): Promise<Order> {
  const r = await c.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId } } });
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  return r.data!;
}

async function events(c: Pick<Clients, 'orders'>): Promise<OrderEvent[]> {
  const r = await c.orders.GET('/v2/events', { params: { query: { limit: 100 } } });
  expect(r.response.status).toBe(200);
  return orderEventsOf(r.data!.data);
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});
const { createOrder } = orderTesting(() => server, ORDER);

describe('the payment state walk', () => {
  it('partial → unverified → covering → surplus → review → cancel, with exactly the documented events', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t);
    const eventsAfter = async (): Promise<string[]> => (await events(t)).map((e) => e.type);
    expect(await eventsAfter()).toEqual(['order.created']);

    // A verified deposit below the expected amount: partially_paid, no webhook.
    const partial = await deposit(t, order.orderId, '50000000');
    expect(partial.order).toMatchObject({ status: 'open', paymentStatus: 'partially_paid', receivedBaseUnits: '50000000' });
    expect(partial.order).not.toHaveProperty('overpaymentBaseUnits');
    expect(partial.payment).toEqual({
      transactionId: expect.stringMatching(/^txn_/),
      txHash: expect.any(String),
      amountBaseUnits: '50000000',
      verified: true,
      status: 'completed',
      createdAt: expect.stringMatching(ISO),
    });
    expect(partial.order.payments).toEqual([partial.payment]);
    expect(partial.order.updatedAt).toBe(partial.payment.createdAt);
    expect(await eventsAfter()).toEqual(['order.created']);

    // An unverified deposit is a pending payment and changes nothing else.
    const unverified = await deposit(t, order.orderId, '70000000', false);
    expect(unverified.payment).toMatchObject({ amountBaseUnits: '70000000', verified: false, status: 'pending' });
    const { payments: afterUnverifiedPayments, ...afterUnverified } = unverified.order;
    const { payments: afterPartialPayments, ...afterPartial } = partial.order;
    expect(afterUnverified).toEqual(afterPartial);
    expect(afterUnverifiedPayments).toEqual([...afterPartialPayments, unverified.payment]);
    expect(await eventsAfter()).toEqual(['order.created']);

    // The verified deposit that covers the amount: paid, exactly one order.paid.
    const covering = await deposit(t, order.orderId, '70000000');
    expect(covering.order).toMatchObject({ status: 'open', paymentStatus: 'paid', receivedBaseUnits: '120000000' });
    expect(covering.order).not.toHaveProperty('overpaymentBaseUnits');
    const afterPaid = await events(t);
    expect(afterPaid.map((e) => e.type)).toEqual(['order.paid', 'order.created']);
    expect(afterPaid[0]).toEqual({
      id: expect.stringMatching(HEX64),
      type: 'order.paid',
      apiVersion: 'v2',
      createdAt: expect.stringMatching(ISO),
      data: {
        orderId: order.orderId,
        merchantReference: 'cart-7782',
        amountMinor: 12000,
        currency: 'USD',
        status: 'paid',
        assetId: 'USDC',
        networkId: 'ethereum',
        amountBaseUnits: '120000000',
        receivedBaseUnits: '120000000',
      },
    });
    expect(Date.parse(afterPaid[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(covering.payment.createdAt));

    // A surplus after paid: amounts move, no webhook.
    const surplus = await deposit(t, order.orderId, '1000000');
    expect(surplus.order).toMatchObject({ paymentStatus: 'paid', receivedBaseUnits: '121000000', overpaymentBaseUnits: '1000000' });
    expect(await eventsAfter()).toEqual(['order.paid', 'order.created']);
    expect(await getOrder(t, order.orderId)).toEqual(surplus.order);

    // Review: review_required with its reason and one event per call.
    const reviewed = await review(t, order.orderId, 'late_or_missing_inclusion');
    expect(reviewed).toMatchObject({ status: 'open', paymentStatus: 'review_required', reviewReason: 'late_or_missing_inclusion', receivedBaseUnits: '121000000', overpaymentBaseUnits: '1000000' });
    expect(reviewed.payments).toEqual(surplus.order.payments);
    const afterReview = await events(t);
    expect(afterReview.map((e) => e.type)).toEqual(['order.payment_review_required', 'order.paid', 'order.created']);
    expect(afterReview[0]!.data).toEqual({
      orderId: order.orderId,
      merchantReference: 'cart-7782',
      amountMinor: 12000,
      currency: 'USD',
      status: 'review_required',
      assetId: 'USDC',
      networkId: 'ethereum',
      amountBaseUnits: '120000000',
      receivedBaseUnits: '121000000',
      overpaymentBaseUnits: '1000000',
      reviewReason: 'late_or_missing_inclusion',
    });
    const again = await review(t, order.orderId, 'deposit_revoked');
    expect(again.reviewReason).toBe('deposit_revoked');
    const afterSecondReview = await events(t);
    expect(afterSecondReview.map((e) => e.type)).toEqual(['order.payment_review_required', 'order.payment_review_required', 'order.paid', 'order.created']);
    expect(afterSecondReview[0]!.data.reviewReason).toBe('deposit_revoked');
    expect(afterSecondReview[0]!.id).not.toBe(afterSecondReview[1]!.id);

    // A verified deposit under review adds to the amounts; the state stays, no webhook.
    const underReview = await deposit(t, order.orderId, '2000000');
    expect(underReview.order).toMatchObject({ paymentStatus: 'review_required', reviewReason: 'deposit_revoked', receivedBaseUnits: '123000000', overpaymentBaseUnits: '3000000' });
    expect((await events(t)).length).toBe(4);

    // Cancel: amounts and payments kept, no webhook; then 404 on lookup, payments still answer.
    const cancelled = await cancel(t, order.orderId);
    const { status: _before, updatedAt: _u1, ...keptBefore } = underReview.order;
    const { status: after, updatedAt: _u2, ...keptAfter } = cancelled;
    expect(after).toBe('cancelled');
    expect(keptAfter).toEqual(keptBefore);
    expect((await events(t)).length).toBe(4);

    const lookup = await t.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: order.orderId } } });
    expect(lookup.response.status).toBe(404);
    expect(lookup.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}not-found` });
    const history = await t.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } });
    expect(history.data).toEqual({
      orderId: order.orderId,
      orderNumber: order.orderNumber,
      status: 'cancelled',
      paymentStatus: 'review_required',
      receivedBaseUnits: '123000000',
      overpaymentBaseUnits: '3000000',
      data: cancelled.payments,
    });
    expect(history.data!.data.map((p) => [p.amountBaseUnits, p.status])).toEqual([
      ['50000000', 'completed'],
      ['70000000', 'pending'],
      ['70000000', 'completed'],
      ['1000000', 'completed'],
      ['2000000', 'completed'],
    ]);

    // The cancelled order takes no further change, and the refusals write nothing.
    const refusals = [
      await t.sandbox.POST('/sandbox/orders/{orderId}/deposits', { params: { path: { orderId: order.orderId } }, body: { amountBaseUnits: '1', verified: true, txHash: txHash() } }),
      await t.sandbox.POST('/sandbox/orders/{orderId}/review', { params: { path: { orderId: order.orderId } }, body: { reason: 'order_cancelled' } }),
      await t.sandbox.POST('/sandbox/orders/{orderId}/cancel', { params: { path: { orderId: order.orderId } } }),
    ];
    for (const r of refusals) {
      expect(r.response.status).toBe(409);
      expect(r.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}order-not-open`, status: 409 });
    }
    expect((await events(t)).length).toBe(4);
    const finalHistory = await t.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } });
    expect(finalHistory.data).toEqual(history.data);
  });

  it('makes an order without an expected amount paid on its first verified deposit, never overpaid', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t, { merchantReference: 'cart-7790', amountMinor: 12500 });
    const pending = await deposit(t, order.orderId, '5', false);
    expect(pending.order.paymentStatus).toBe('unpaid');
    const first = await deposit(t, order.orderId, '5');
    expect(first.order).toMatchObject({ paymentStatus: 'paid', receivedBaseUnits: '5' });
    const second = await deposit(t, order.orderId, '7');
    expect(second.order).toMatchObject({ paymentStatus: 'paid', receivedBaseUnits: '12' });
    expect(second.order).not.toHaveProperty('overpaymentBaseUnits');
    expect(second.order).not.toHaveProperty('amountBaseUnits');
    const all = await events(t);
    expect(all.map((e) => e.type)).toEqual(['order.paid', 'order.created']);
    expect(all[0]!.data).toEqual({ orderId: order.orderId, merchantReference: 'cart-7790', amountMinor: 12500, currency: 'USD', status: 'paid', receivedBaseUnits: '5' });
  });

  it('reports the excess of a first deposit that overpays, in the order and in order.paid', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t, { ...ORDER, amountBaseUnits: '49990000' });
    const paid = await deposit(t, order.orderId, '50000000');
    expect(paid.order).toMatchObject({ paymentStatus: 'paid', receivedBaseUnits: '50000000', overpaymentBaseUnits: '10000' });
    const [event] = await events(t);
    expect(event!.data).toMatchObject({ status: 'paid', receivedBaseUnits: '50000000', overpaymentBaseUnits: '10000' });
  });

  it('pays on the exact amount, reached by several partial deposits', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t, { ...ORDER, amountBaseUnits: '999999999999' });
    let last: Order = order;
    for (const amount of ['333333333333', '333333333333']) {
      last = (await deposit(t, order.orderId, amount)).order;
      expect(last.paymentStatus).toBe('partially_paid');
    }
    last = (await deposit(t, order.orderId, '333333333333')).order;
    expect(last).toMatchObject({ paymentStatus: 'paid', receivedBaseUnits: '999999999999' });
    expect(last).not.toHaveProperty('overpaymentBaseUnits');
    expect((await events(t)).filter((e) => e.type === 'order.paid')).toHaveLength(1);
  });

  it('reviews an unpaid order and cancels an untouched one without any amount changing', async () => {
    const t = await server.newTenant();
    const a = await createOrder(t);
    const reviewed = await review(t, a.orderId, 'order_cancelled');
    expect(reviewed).toMatchObject({ paymentStatus: 'review_required', reviewReason: 'order_cancelled', receivedBaseUnits: '0', payments: [] });
    // A verified deposit that would cover the amount does not make a reviewed order paid.
    const credited = await deposit(t, a.orderId, '120000000');
    expect(credited.order).toMatchObject({ paymentStatus: 'review_required', receivedBaseUnits: '120000000' });
    expect((await events(t)).map((e) => e.type)).toEqual(['order.payment_review_required', 'order.created']);

    const b = await createOrder(t);
    const cancelled = await cancel(t, b.orderId);
    expect(cancelled).toEqual({ ...b, status: 'cancelled', updatedAt: cancelled.updatedAt });
    expect(Date.parse(cancelled.updatedAt)).toBeGreaterThanOrEqual(Date.parse(b.updatedAt));
  });
});

describe('payment transactions', () => {
  // Needs the Transactions API handlers (GET /transactions), built in parallel.
  it('records every deposit as a payment transaction findable by orderNumber and txHash', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t);
    const hashA = txHash();
    const hashB = txHash();
    const a = await deposit(t, order.orderId, '50000000', true, hashA);
    const b = await deposit(t, order.orderId, '7000', false, hashB);

    const byHash = await t.transactions.GET('/transactions', { params: { query: { txHash: hashA }, header: { 'x-tenant-id': t.tenantId } } });
    expect(byHash.error, JSON.stringify(byHash.error)).toBeUndefined();
    expect(byHash.data).toEqual({
      id: a.payment.transactionId,
      tenantId: t.tenantId,
      status: 'completed',
      side: 'credit',
      type: 'payment',
      orderId: order.orderId,
      orderNumber: order.orderNumber,
      // USDC has 6 decimals: 50000000 base units are 50 USDC.
      amount: 50,
      amountBaseUnits: '50000000',
      txHash: hashA,
      createdDate: a.payment.createdAt,
      completedDate: a.payment.createdAt,
    });

    // By order number: the most recent payment of the order, here the pending one.
    const byNumber = await t.transactions.GET('/transactions', { params: { query: { orderNumber: order.orderNumber }, header: { 'x-tenant-id': t.tenantId } } });
    expect(byNumber.error, JSON.stringify(byNumber.error)).toBeUndefined();
    expect(byNumber.data).toMatchObject({ id: b.payment.transactionId, status: 'pending', type: 'payment', orderNumber: order.orderNumber, txHash: hashB, amount: 0.007, amountBaseUnits: '7000' });
    expect(byNumber.data).not.toHaveProperty('completedDate');
    expect(byNumber.data).not.toHaveProperty('userId');

    // Both filters must match the same transaction.
    const both = await t.transactions.GET('/transactions', { params: { query: { orderNumber: order.orderNumber, txHash: hashA }, header: { 'x-tenant-id': t.tenantId } } });
    expect(both.data?.id).toBe(a.payment.transactionId);

    // Another tenant finds none of them.
    const other = await server.newTenant();
    const hidden = await other.transactions.GET('/transactions', { params: { query: { txHash: hashA }, header: { 'x-tenant-id': other.tenantId } } });
    expect(hidden.response.status).toBe(404);
  });

  it('gives amount in the asset units when exact, else only the exact amountBaseUnits, and takes any number of digits', async () => {
    const t = await server.newTenant();
    const find = async (hash: string) => {
      const r = await t.transactions.GET('/transactions', { params: { query: { txHash: hash }, header: { 'x-tenant-id': t.tenantId } } });
      expect(r.error, JSON.stringify(r.error)).toBeUndefined();
      return r.data!;
    };
    const eth = await createOrder(t, { merchantReference: 'eth-1', amountMinor: 300000, assetId: 'ETH', networkId: 'ethereum' });
    const unknown = await createOrder(t, { merchantReference: 'kru-1', amountMinor: 100, assetId: 'KRU-X', networkId: 'ethereum' });
    const noAsset = await createOrder(t, { merchantReference: 'none-1', amountMinor: 100 });
    const cases: Array<[string, string, number | undefined]> = [
      // 1.5 ETH: 19 digits of wei, beyond the old 12-digit sandbox cap.
      [eth.orderId, '1500000000000000000', 1.5],
      // Every wei: more than 8 decimal places, so no exact Amount: base units only, not rounded.
      [eth.orderId, '1234567890123456789', undefined],
      [eth.orderId, `1${'0'.repeat(77)}`, undefined],
      [unknown.orderId, '1000000', undefined],
      [noAsset.orderId, '1000000', undefined],
    ];
    for (const [orderId, baseUnits, amount] of cases) {
      const hash = txHash();
      const made = await deposit(t, orderId, baseUnits, true, hash);
      expect(made.payment.amountBaseUnits).toBe(baseUnits);
      const found = await find(hash);
      expect(found.amountBaseUnits).toBe(baseUnits);
      if (amount === undefined) expect(found, baseUnits).not.toHaveProperty('amount');
      else expect(found.amount).toBe(amount);
    }
    expect((await getOrder(t, eth.orderId)).receivedBaseUnits).toBe((1500000000000000000n + 1234567890123456789n + 10n ** 77n).toString());
  });
});

describe('errors', () => {
  it('answers 404 for an unknown or non-UUID order id, 400 for one over 64 characters', async () => {
    const t = await server.newTenant();
    for (const path of [`/sandbox/orders/${UNKNOWN_ORDER}/deposits`, `/sandbox/orders/${UNKNOWN_ORDER}/review`, `/sandbox/orders/${UNKNOWN_ORDER}/cancel`]) {
      const body = path.endsWith('deposits') ? { amountBaseUnits: '1', verified: true, txHash: txHash() } : path.endsWith('review') ? { reason: 'deposit_revoked' } : undefined;
      const r = await sendRaw(server.url, keyOf(t), 'POST', path, body ? { text: JSON.stringify(body) } : {});
      expectProblem(r, 404, 'not-found');
      expect(r.body.detail).toContain(UNKNOWN_ORDER);
      const notUuid = await sendRaw(server.url, keyOf(t), 'POST', path.replace(UNKNOWN_ORDER, 'ORD-000001'), body ? { text: JSON.stringify(body) } : {});
      expectProblem(notUuid, 404, 'not-found');
      const tooLong = await sendRaw(server.url, keyOf(t), 'POST', path.replace(UNKNOWN_ORDER, 'x'.repeat(65)), body ? { text: JSON.stringify(body) } : {});
      expectProblem(tooLong, 400, 'validation-failed');
      expect(tooLong.body.errors).toEqual([{ pointer: '/path/orderId', detail: expect.any(String) }]);
    }
    expect(await events(t)).toEqual([]);
  });

  it('answers 401, 403 permission-denied and 403 live-key-not-allowed, and changes nothing', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t);
    const readOnly = await server.keyWith(t, ['orders_read', 'payouts', 'refunds']);
    const live = await server.keyWith(t, ['orders_read', 'orders_write'], 'live');
    const liveOrder = await createOrder(live);
    const calls = (orderId: string): Array<[string, string | undefined]> => [
      [`/sandbox/orders/${orderId}/deposits`, JSON.stringify({ amountBaseUnits: '120000000', verified: true, txHash: txHash() })],
      [`/sandbox/orders/${orderId}/review`, JSON.stringify({ reason: 'deposit_revoked' })],
      [`/sandbox/orders/${orderId}/cancel`, undefined],
    ];
    for (const [path, body] of calls(order.orderId)) {
      const init = body !== undefined ? { text: body } : {};
      expectProblem(await sendRaw(server.url, keyOf({ apiKey: t.apiKey, apiHash: 'sk_test_wrong' }), 'POST', path, init), 401, 'unauthenticated');
      const denied = await sendRaw(server.url, keyOf(readOnly), 'POST', path, init);
      expectProblem(denied, 403, 'permission-denied');
      expect(denied.body.detail).toContain('orders_write');
      expectProblem(await sendRaw(server.url, keyOf(live), 'POST', path, init), 403, 'live-key-not-allowed');
    }
    // A live key is refused before anything else, even on its own live order.
    for (const [path, body] of calls(liveOrder.orderId)) expectProblem(await sendRaw(server.url, keyOf(live), 'POST', path, body !== undefined ? { text: body } : {}), 403, 'live-key-not-allowed');

    expect(await getOrder(t, order.orderId)).toEqual(order);
    expect(await getOrder(live, liveOrder.orderId)).toEqual(liveOrder);
    expect((await events(t)).length).toBe(1);
  });

  it('answers 400 for invalid deposits and reviews, and writes nothing', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t);
    const valid = { amountBaseUnits: '49990000', verified: true, txHash: '0x9b2f6c1e4d7a8b3c5e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d' };
    const depositCases: Array<[unknown, string[]]> = [
      [{}, ['/body/amountBaseUnits', '/body/verified', '/body/txHash']],
      [{ verified: true, txHash: valid.txHash }, ['/body/amountBaseUnits']],
      [{ amountBaseUnits: '1', txHash: valid.txHash }, ['/body/verified']],
      [{ amountBaseUnits: '1', verified: true }, ['/body/txHash']],
      [{ ...valid, amountBaseUnits: '0' }, ['/body/amountBaseUnits']],
      [{ ...valid, amountBaseUnits: '01' }, ['/body/amountBaseUnits']],
      [{ ...valid, amountBaseUnits: '1.5' }, ['/body/amountBaseUnits']],
      [{ ...valid, amountBaseUnits: '-1' }, ['/body/amountBaseUnits']],
      [{ ...valid, amountBaseUnits: `1${'0'.repeat(78)}` }, ['/body/amountBaseUnits']],
      [{ ...valid, amountBaseUnits: 49990000 }, ['/body/amountBaseUnits']],
      [{ ...valid, verified: 'true' }, ['/body/verified']],
      [{ ...valid, verified: 1 }, ['/body/verified']],
      [{ ...valid, txHash: '' }, ['/body/txHash']],
      [{ ...valid, txHash: '0x9b2f-6c1e' }, ['/body/txHash']],
      [{ ...valid, txHash: 'a'.repeat(129) }, ['/body/txHash']],
      [{ ...valid, orderId: order.orderId }, ['/body/orderId']],
      [[valid], ['/body']],
    ];
    for (const [body, pointers] of depositCases) {
      const r = await sendRaw(server.url, keyOf(t), 'POST', `/sandbox/orders/${order.orderId}/deposits`, { text: JSON.stringify(body) });
      expectProblem(r, 400, 'validation-failed');
      const got = (r.body.errors as Array<{ pointer: string }>).map((e) => e.pointer);
      for (const p of pointers) expect(got, JSON.stringify(body)).toContain(p);
    }
    const pollution = await sendRaw(server.url, keyOf(t), 'POST', `/sandbox/orders/${order.orderId}/deposits`, {
      text: `{"amountBaseUnits":"1","verified":true,"txHash":"0xab","__proto__":{"verified":false}}`,
    });
    expectProblem(pollution, 400, 'validation-failed');
    expect(pollution.body.errors).toEqual([{ pointer: '/body/__proto__', detail: expect.any(String) }]);

    for (const [body, pointer] of [
      [{}, '/body/reason'],
      [{ reason: 'fraud' }, '/body/reason'],
      [{ reason: null }, '/body/reason'],
      [{ reason: 'deposit_revoked', note: 'x' }, '/body/note'],
    ] as const) {
      const r = await sendRaw(server.url, keyOf(t), 'POST', `/sandbox/orders/${order.orderId}/review`, { text: JSON.stringify(body) });
      expectProblem(r, 400, 'validation-failed');
      expect((r.body.errors as Array<{ pointer: string }>).map((e) => e.pointer)).toContain(pointer);
    }
    for (const path of [`/sandbox/orders/${order.orderId}/deposits`, `/sandbox/orders/${order.orderId}/review`]) {
      expectProblem(await sendRaw(server.url, keyOf(t), 'POST', path), 400, 'validation-failed');
      expectProblem(await sendRaw(server.url, keyOf(t), 'POST', path, { text: '{"amountBaseUnits":' }), 400, 'malformed-json');
      expectProblem(await sendRaw(server.url, keyOf(t), 'POST', path, { text: '{}', contentType: 'text/plain' }), 415, 'unsupported-media-type');
      expectProblem(await sendRaw(server.url, keyOf(t), 'POST', path, { text: JSON.stringify({ reason: 'x'.repeat(70 * 1024) }) }), 413, 'payload-too-large');
    }

    expect(await getOrder(t, order.orderId)).toEqual(order);
    expect((await events(t)).length).toBe(1);
  });
});

describe('isolation', () => {
  it('lets no tenant deposit to, review or cancel the order of another', async () => {
    const a = await server.newTenant();
    const b = await server.newTenant();
    const order = await createOrder(a);
    const answers = [
      await b.sandbox.POST('/sandbox/orders/{orderId}/deposits', { params: { path: { orderId: order.orderId } }, body: { amountBaseUnits: '120000000', verified: true, txHash: txHash() } }),
      await b.sandbox.POST('/sandbox/orders/{orderId}/review', { params: { path: { orderId: order.orderId } }, body: { reason: 'deposit_revoked' } }),
      await b.sandbox.POST('/sandbox/orders/{orderId}/cancel', { params: { path: { orderId: order.orderId } } }),
    ];
    for (const r of answers) {
      expect(r.response.status).toBe(404);
      expect(r.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}not-found` });
    }
    expect(await getOrder(a, order.orderId)).toEqual(order);
    expect((await events(a)).map((e) => e.type)).toEqual(['order.created']);
    expect(await events(b)).toEqual([]);
  });
});
