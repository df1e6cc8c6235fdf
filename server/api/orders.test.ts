// The v2 order API over HTTP: creating orders, reading one and its payment history.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { allEvents, deposit, HEX64, ISO, orderTesting, txHash, USD_ONLY, UUID, WITH_TOKEN } from './testing/orders.ts';
import { expectProblem, keyOf, sendRaw } from '../testing/raw-http.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});
const { createOrder, deliveries } = orderTesting(() => server, WITH_TOKEN);

describe('POST /v2/orders', () => {
  it('creates an open, unpaid order with nothing received, no payments and a Location header', async () => {
    const t = await server.newTenant();
    const r = await t.orders.POST('/v2/orders', { body: WITH_TOKEN });
    expect(r.response.status).toBe(201);
    const order = r.data!;
    expect(order).toEqual({
      orderId: expect.stringMatching(UUID),
      orderNumber: expect.stringMatching(/^ORD-\d{6}$/),
      merchantReference: 'cart-7781',
      amountMinor: 4999,
      currency: 'USD',
      status: 'open',
      paymentStatus: 'unpaid',
      assetId: 'USDC',
      networkId: 'ethereum',
      amountBaseUnits: '49990000',
      receivedBaseUnits: '0',
      createdAt: expect.stringMatching(ISO),
      updatedAt: order.createdAt,
      payments: [],
    });
    expect(r.response.headers.get('location')).toBe(`/v2/orders/${order.orderId}`);

    // The Location answers the same order.
    const read = await sendRaw(server.url, keyOf(t), 'GET', r.response.headers.get('location')!);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(order);
  });

  it('leaves optional fields out (never null) when they were not given', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t, USD_ONLY);
    expect(Object.keys(order).sort()).toEqual(
      ['orderId', 'orderNumber', 'merchantReference', 'amountMinor', 'currency', 'status', 'paymentStatus', 'receivedBaseUnits', 'createdAt', 'updatedAt', 'payments'].sort(),
    );
    const read = await t.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: order.orderId } } });
    expect(read.data).toEqual(order);
  });

  it('accepts the largest amounts and does not require merchantReference to be unique', async () => {
    const t = await server.newTenant();
    const big = '9'.repeat(78);
    const a = await createOrder(t, { merchantReference: 'dup-ref', amountMinor: 100_000_000_000, amountBaseUnits: big });
    const b = await createOrder(t, { merchantReference: 'dup-ref', amountMinor: 1 });
    expect(a.amountBaseUnits).toBe(big);
    expect(a.amountMinor).toBe(100_000_000_000);
    expect(b.merchantReference).toBe('dup-ref');
    expect(a.orderId).not.toBe(b.orderId);
  });

  it('assigns order numbers that are unique and increasing per environment', async () => {
    const a = await server.newTenant();
    const b = await server.newTenant();
    const numbersA: string[] = [];
    for (let i = 0; i < 5; i++) numbersA.push((await createOrder(a, { ...USD_ONLY, merchantReference: `a-${i}` })).orderNumber);
    // Concurrent creations never share a number either.
    const concurrent = await Promise.all(Array.from({ length: 8 }, (_, i) => createOrder(a, { ...USD_ONLY, merchantReference: `c-${i}` })));
    const all = [...numbersA, ...concurrent.map((o) => o.orderNumber)];
    expect(new Set(all).size).toBe(all.length);
    const asInts = numbersA.map((n) => Number(n.slice(4)));
    for (let i = 1; i < asInts.length; i++) expect(asInts[i]).toBeGreaterThan(asInts[i - 1]!);

    // Another tenant, and the live environment of the same tenant, count on their own.
    expect((await createOrder(b, USD_ONLY)).orderNumber).toBe('ORD-000001');
    const live = await server.keyWith(a, ['orders_write'], 'live');
    expect((await createOrder(live, USD_ONLY)).orderNumber).toBe('ORD-000001');
    expect(numbersA[0]).toBe('ORD-000001');
  });

  it('emits order.created with the order snapshot, in the feed even without an endpoint, and prepares no delivery', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t, WITH_TOKEN);
    const usdOnly = await createOrder(t, USD_ONLY);
    const events = await allEvents(t);
    expect(events).toHaveLength(2);
    const [second, first] = events;
    expect(first).toEqual({
      id: expect.stringMatching(HEX64),
      type: 'order.created',
      apiVersion: 'v2',
      createdAt: expect.stringMatching(ISO),
      data: {
        orderId: order.orderId,
        merchantReference: 'cart-7781',
        amountMinor: 4999,
        currency: 'USD',
        status: 'open',
        assetId: 'USDC',
        networkId: 'ethereum',
        amountBaseUnits: '49990000',
        receivedBaseUnits: '0',
      },
    });
    expect(second!.data).toEqual({ orderId: usdOnly.orderId, merchantReference: 'cart-7790', amountMinor: 12500, currency: 'USD', status: 'open', receivedBaseUnits: '0' });
    expect(await deliveries(await server.environmentId(t.tenantId))).toEqual([]);
  });
});

describe('GET /v2/orders/{orderId} and /payments', () => {
  it('answers 404 for unknown ids of any form up to 64 characters, and 400 beyond', async () => {
    const t = await server.newTenant();
    await createOrder(t);
    for (const orderId of ['3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90', 'not-a-uuid', 'x'.repeat(64), 'ORD-000001', "'; DROP TABLE orders; --"]) {
      for (const path of [`/v2/orders/${encodeURIComponent(orderId)}`, `/v2/orders/${encodeURIComponent(orderId)}/payments`]) {
        const r = await sendRaw(server.url, keyOf(t), 'GET', path);
        expectProblem(r, 404, 'not-found');
      }
    }
    for (const path of [`/v2/orders/${'x'.repeat(65)}`, `/v2/orders/${'x'.repeat(65)}/payments`]) {
      const r = await sendRaw(server.url, keyOf(t), 'GET', path);
      expectProblem(r, 400, 'validation-failed');
      expect(r.body.errors).toEqual([{ pointer: '/path/orderId', detail: expect.stringContaining('64') }]);
    }
  });

  it('lists the payments with the current amounts, oldest first; receivedBaseUnits is the sum of completed payments', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t, { ...WITH_TOKEN, amountBaseUnits: '1000' });
    await deposit(t, order.orderId, '300');
    await deposit(t, order.orderId, '500', false);
    await deposit(t, order.orderId, '900');
    const r = await t.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } });
    expect(r.response.status).toBe(200);
    const list = r.data!;
    expect(list).toEqual({
      orderId: order.orderId,
      orderNumber: order.orderNumber,
      status: 'open',
      paymentStatus: 'paid',
      receivedBaseUnits: '1200',
      overpaymentBaseUnits: '200',
      data: [
        { transactionId: expect.any(String), txHash: expect.any(String), amountBaseUnits: '300', verified: true, status: 'completed', createdAt: expect.stringMatching(ISO) },
        { transactionId: expect.any(String), txHash: expect.any(String), amountBaseUnits: '500', verified: false, status: 'pending', createdAt: expect.stringMatching(ISO) },
        { transactionId: expect.any(String), txHash: expect.any(String), amountBaseUnits: '900', verified: true, status: 'completed', createdAt: expect.stringMatching(ISO) },
      ],
    });
    const sum = list.data.filter((p) => p.status === 'completed').reduce((s, p) => s + BigInt(p.amountBaseUnits), 0n);
    expect(list.receivedBaseUnits).toBe(sum.toString());
    const read = await t.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: order.orderId } } });
    expect(read.data!.payments).toEqual(list.data);
    expect(read.data!.receivedBaseUnits).toBe('1200');
  });

  it('keeps the payments readable after cancellation while the order itself answers 404', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t);
    await deposit(t, order.orderId, '1000', false);
    const cancel = await t.sandbox.POST('/sandbox/orders/{orderId}/cancel', { params: { path: { orderId: order.orderId } } });
    expect(cancel.response.status).toBe(200);
    const read = await sendRaw(server.url, keyOf(t), 'GET', `/v2/orders/${order.orderId}`);
    expectProblem(read, 404, 'not-found');
    expect(read.body.detail).toContain('cancelled');
    const payments = await t.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } });
    expect(payments.response.status).toBe(200);
    expect(payments.data).toMatchObject({ status: 'cancelled', paymentStatus: 'unpaid', receivedBaseUnits: '0', data: [{ amountBaseUnits: '1000', status: 'pending' }] });
  });
});
