// The v2 order API over HTTP: creation, lookup, payment history, the events feed and its
// outbox, every documented error, and tenant/environment isolation.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret } from '../../signing/signature.ts';
import type { components } from '../../generated/types/orders.ts';
import { createApiKey } from '../domain/admin.ts';
import { recordPayoutCallback, recordTestEvent } from '../domain/events.ts';
import { newEndpointId } from '../domain/ids.ts';
import type { DeliveryRecord, EndpointRecord, EnvironmentName, Permission } from '../domain/model.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';

type Order = components['schemas']['Order'];
type OrderEvent = components['schemas']['OrderEvent'];
type CreateOrderRequest = components['schemas']['CreateOrderRequest'];
type Clients = ReturnType<TestServer['clientsFor']>;

const PROBLEM = 'https://errors.payments.example/';
const HEX64 = /^[0-9a-f]{64}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const WITH_TOKEN: CreateOrderRequest = {
  merchantReference: 'cart-7781',
  amountMinor: 4999,
  assetId: 'USDC',
  networkId: 'ethereum',
  amountBaseUnits: '49990000',
};
const USD_ONLY: CreateOrderRequest = { merchantReference: 'cart-7790', amountMinor: 12500 };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

let hashCounter = 0;
/** A fresh, realistic on-chain hash. */
const txHash = (): string => `0x${(++hashCounter).toString(16).padStart(8, '0')}${'9b2f6c1e4d7a8b3c5e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f'}`;

async function createOrder(c: Pick<Clients, 'orders'>, body: CreateOrderRequest = WITH_TOKEN): Promise<Order> {
  const r = await c.orders.POST('/v2/orders', { body });
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.response.status).toBe(201);
  return r.data as Order;
}

async function deposit(t: Pick<Clients, 'sandbox'>, orderId: string, amountBaseUnits: string, verified = true): Promise<Order> {
  const r = await t.sandbox.POST('/sandbox/orders/{orderId}/deposits', { params: { path: { orderId } }, body: { amountBaseUnits, verified, txHash: txHash() } });
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.response.status).toBe(201);
  return r.data!.order;
}

/** Every event of the feed, following the cursor. */
async function allEvents(c: Pick<Clients, 'orders'>, query: { type?: OrderEvent['type']; limit?: number } = {}): Promise<OrderEvent[]> {
  const events: OrderEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await c.orders.GET('/v2/events', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } });
    expect(r.response.status).toBe(200);
    events.push(...r.data!.data);
    if (r.data!.nextCursor === null) return events;
    cursor = r.data!.nextCursor;
  }
  throw new Error('the feed did not end');
}

async function environmentId(tenantId: string, name: EnvironmentName = 'test'): Promise<string> {
  const env = await server.services.store.transaction((tx) => tx.tenants.findEnvironment(tenantId, name));
  if (!env) throw new Error(`no ${name} environment for ${tenantId}`);
  return env.id;
}

async function deliveries(envId: string, q: string | null = null): Promise<DeliveryRecord[]> {
  const page = await server.services.store.transaction((tx) => tx.deliveries.list(envId, { q, limit: 100, cursor: null }));
  return page.items;
}

/** Clients for a key of the tenant with exactly these permissions. */
async function keyWith(t: TestTenant, permissions: Permission[], environment: EnvironmentName = 'test'): Promise<Clients> {
  const k = await createApiKey(server.services, { tenantId: t.tenantId, environment, permissions });
  return server.clientsFor({ apiKey: k.apiKey, apiHash: k.apiHash, tenantId: t.tenantId });
}

/** A raw request, for bodies and headers the typed clients cannot express. */
async function raw(
  t: { apiKey: string; apiHash: string },
  method: string,
  path: string,
  init: { body?: string; contentType?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; contentType: string | null; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      'x-api-key': t.apiKey,
      'x-api-hash': t.apiHash,
      ...(init.body !== undefined ? { 'content-type': init.contentType ?? 'application/json' } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

function expectProblem(r: { status: number; contentType: string | null; body: Record<string, unknown> }, status: number, slug: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.contentType).toMatch(/^application\/problem\+json/);
  expect(r.body.type).toBe(`${PROBLEM}${slug}`);
  expect(r.body.status).toBe(status);
  expect(typeof r.body.title).toBe('string');
  expect(typeof r.body.detail).toBe('string');
}

/** An HTTP receiver on loopback that accepts every webhook. */
async function receiver(): Promise<{ url: string; close(): Promise<void> }> {
  const s: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/webhooks`,
    close: () => new Promise<void>((resolve) => s.close(() => resolve())),
  };
}

async function insertActiveEndpoint(envId: string, url: string): Promise<EndpointRecord> {
  const now = server.services.clock.now();
  const endpoint: EndpointRecord = {
    id: newEndpointId(now),
    environmentId: envId,
    url,
    secretEnc: server.services.secrets.seal(generateSecret()),
    active: true,
    version: 1,
    lastTestDeliveryId: null,
    createdAt: now,
    updatedAt: now,
    disabledAt: null,
  };
  await server.services.store.transaction((tx) => tx.endpoints.insert(endpoint));
  return endpoint;
}

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
    const read = await raw(t, 'GET', r.response.headers.get('location')!);
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
    const live = await keyWith(a, ['orders_write'], 'live');
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
    expect(await deliveries(await environmentId(t.tenantId))).toEqual([]);
  });
});

describe('GET /v2/orders/{orderId} and /payments', () => {
  it('answers 404 for unknown ids of any form up to 64 characters, and 400 beyond', async () => {
    const t = await server.newTenant();
    await createOrder(t);
    for (const orderId of ['3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90', 'not-a-uuid', 'x'.repeat(64), 'ORD-000001', "'; DROP TABLE orders; --"]) {
      for (const path of [`/v2/orders/${encodeURIComponent(orderId)}`, `/v2/orders/${encodeURIComponent(orderId)}/payments`]) {
        const r = await raw(t, 'GET', path);
        expectProblem(r, 404, 'not-found');
      }
    }
    for (const path of [`/v2/orders/${'x'.repeat(65)}`, `/v2/orders/${'x'.repeat(65)}/payments`]) {
      const r = await raw(t, 'GET', path);
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
    const read = await raw(t, 'GET', `/v2/orders/${order.orderId}`);
    expectProblem(read, 404, 'not-found');
    expect(read.body.detail).toContain('cancelled');
    const payments = await t.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } });
    expect(payments.response.status).toBe(200);
    expect(payments.data).toMatchObject({ status: 'cancelled', paymentStatus: 'unpaid', receivedBaseUnits: '0', data: [{ amountBaseUnits: '1000', status: 'pending' }] });
  });
});

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
      pages.push(r.data!.data);
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
    const env = await environmentId(t.tenantId);
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
    for (const cursor of [forged, 'MA', padded, 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const r = await raw(t, 'GET', `/v2/events?cursor=${cursor}`);
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
      const r = await raw(t, 'GET', `/v2/events?${query}`);
      expectProblem(r, 400, 'validation-failed');
      expect((r.body.errors as Array<{ pointer: string }>).map((e) => e.pointer)).toContain(pointer);
    }
  });
});

describe('the outbox', () => {
  it('prepares exactly one delivery per event, in the same transaction, only while an endpoint is active', async () => {
    const t = await server.newTenant();
    const env = await environmentId(t.tenantId);
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
    const env = await environmentId(t.tenantId);
    const rx = await receiver();
    try {
      await insertActiveEndpoint(env, rx.url);
      const order = await createOrder(t);
      await t.sandbox.POST('/sandbox/orders/{orderId}/cancel', { params: { path: { orderId: order.orderId } } });
      const eventsBefore = await allEvents(t);
      const deliveriesBefore = await deliveries(env);
      const refused = [
        await raw(t, 'POST', `/sandbox/orders/${order.orderId}/deposits`, { body: JSON.stringify({ amountBaseUnits: '49990000', verified: true, txHash: txHash() }) }),
        await raw(t, 'POST', `/sandbox/orders/${order.orderId}/review`, { body: JSON.stringify({ reason: 'order_cancelled' }) }),
        await raw(t, 'POST', `/sandbox/orders/${order.orderId}/cancel`),
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

describe('errors', () => {
  it('answers 401 without valid credentials, and writes nothing', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t);
    const wrong = [
      { apiKey: t.apiKey, apiHash: 'sk_test_wrong' },
      { apiKey: 'pk_test_01JD00000000000000000000000', apiHash: t.apiHash },
      { apiKey: '', apiHash: '' },
    ];
    for (const creds of wrong) {
      expectProblem(await raw(creds, 'POST', '/v2/orders', { body: JSON.stringify(USD_ONLY) }), 401, 'unauthenticated');
      expectProblem(await raw(creds, 'GET', `/v2/orders/${order.orderId}`), 401, 'unauthenticated');
      expectProblem(await raw(creds, 'GET', `/v2/orders/${order.orderId}/payments`), 401, 'unauthenticated');
      expectProblem(await raw(creds, 'GET', '/v2/events'), 401, 'unauthenticated');
    }
    const noHash = await fetch(`${server.url}/v2/events`, { headers: { 'x-api-key': t.apiKey } });
    expect(noHash.status).toBe(401);
    expect(await allEvents(t)).toHaveLength(1);
  });

  it('answers 403 permission-denied per operation for keys without orders_read or orders_write', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t);
    const readOnly = await keyWith(t, ['orders_read']);
    const writeOnly = await keyWith(t, ['orders_write']);
    const neither = await keyWith(t, ['payouts', 'staking', 'transactions_read', 'refunds', 'webhooks_manage']);

    for (const c of [readOnly, neither]) {
      const r = await c.orders.POST('/v2/orders', { body: USD_ONLY });
      expect(r.response.status).toBe(403);
      expect(r.error).toMatchObject({ type: `${PROBLEM}permission-denied`, detail: expect.stringContaining('orders_write') });
    }
    for (const c of [writeOnly, neither]) {
      const reads = [
        await c.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: order.orderId } } }),
        await c.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } }),
        await c.orders.GET('/v2/events'),
      ];
      for (const r of reads) {
        expect(r.response.status).toBe(403);
        expect(r.error).toMatchObject({ type: `${PROBLEM}permission-denied`, detail: expect.stringContaining('orders_read') });
      }
    }
    // The matching permission is enough on its own.
    expect((await writeOnly.orders.POST('/v2/orders', { body: USD_ONLY })).response.status).toBe(201);
    expect((await readOnly.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: order.orderId } } })).response.status).toBe(200);
    expect((await readOnly.orders.GET('/v2/events')).data!.data).toHaveLength(2);
  });

  it('answers 403 tenant-mismatch when x-tenant-id names another tenant, and writes nothing', async () => {
    const a = await server.newTenant();
    const b = await server.newTenant();
    const order = await createOrder(a);
    const mismatched = server.clientsFor({ apiKey: a.apiKey, apiHash: a.apiHash, tenantId: b.tenantId });
    const answers = [
      await mismatched.orders.POST('/v2/orders', { body: USD_ONLY }),
      await mismatched.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: order.orderId } } }),
      await mismatched.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } }),
      await mismatched.orders.GET('/v2/events'),
    ];
    for (const r of answers) {
      expect(r.response.status).toBe(403);
      expect(r.error).toMatchObject({ type: `${PROBLEM}tenant-mismatch`, status: 403 });
    }
    expect(await allEvents(a)).toHaveLength(1);
    expect(await allEvents(b)).toHaveLength(0);
  });

  it('answers 400 validation-failed naming each invalid field, and writes nothing', async () => {
    const t = await server.newTenant();
    const valid = { merchantReference: 'cart-7781', amountMinor: 4999 };
    const cases: Array<[string, unknown, string[]]> = [
      ['empty object', {}, ['/body/merchantReference', '/body/amountMinor']],
      ['merchantReference missing', { amountMinor: 4999 }, ['/body/merchantReference']],
      ['amountMinor missing', { merchantReference: 'cart-7781' }, ['/body/amountMinor']],
      ['merchantReference a number', { ...valid, merchantReference: 7781 }, ['/body/merchantReference']],
      ['merchantReference empty', { ...valid, merchantReference: '' }, ['/body/merchantReference']],
      ['merchantReference too long', { ...valid, merchantReference: 'r'.repeat(129) }, ['/body/merchantReference']],
      ['merchantReference null', { ...valid, merchantReference: null }, ['/body/merchantReference']],
      ['amountMinor a string', { ...valid, amountMinor: '4999' }, ['/body/amountMinor']],
      ['amountMinor 0', { ...valid, amountMinor: 0 }, ['/body/amountMinor']],
      ['amountMinor negative', { ...valid, amountMinor: -4999 }, ['/body/amountMinor']],
      ['amountMinor a float', { ...valid, amountMinor: 49.99 }, ['/body/amountMinor']],
      ['amountMinor huge', { ...valid, amountMinor: 100_000_000_001 }, ['/body/amountMinor']],
      ['amountMinor 1e300', { ...valid, amountMinor: 1e300 }, ['/body/amountMinor']],
      ['amountMinor a boolean', { ...valid, amountMinor: true }, ['/body/amountMinor']],
      ['amountBaseUnits "0"', { ...valid, amountBaseUnits: '0' }, ['/body/amountBaseUnits']],
      ['amountBaseUnits "01"', { ...valid, amountBaseUnits: '01' }, ['/body/amountBaseUnits']],
      ['amountBaseUnits "1.5"', { ...valid, amountBaseUnits: '1.5' }, ['/body/amountBaseUnits']],
      ['amountBaseUnits "-1"', { ...valid, amountBaseUnits: '-1' }, ['/body/amountBaseUnits']],
      ['amountBaseUnits "1e6"', { ...valid, amountBaseUnits: '1e6' }, ['/body/amountBaseUnits']],
      ['amountBaseUnits empty', { ...valid, amountBaseUnits: '' }, ['/body/amountBaseUnits']],
      ['amountBaseUnits a number', { ...valid, amountBaseUnits: 49990000 }, ['/body/amountBaseUnits']],
      ['amountBaseUnits 79 digits', { ...valid, amountBaseUnits: '1'.repeat(79) }, ['/body/amountBaseUnits']],
      ['assetId with a space', { ...valid, assetId: 'US DC' }, ['/body/assetId']],
      ['assetId empty', { ...valid, assetId: '' }, ['/body/assetId']],
      ['networkId too long', { ...valid, networkId: 'n'.repeat(65) }, ['/body/networkId']],
      ['networkId null', { ...valid, networkId: null }, ['/body/networkId']],
      ['unknown field', { ...valid, currency: 'USD' }, ['/body/currency']],
      ['unknown field status', { ...valid, status: 'paid' }, ['/body/status']],
      ['an array', [valid], ['/body']],
      ['a string', 'cart-7781', ['/body']],
      ['null', null, ['/body']],
    ];
    for (const [name, body, pointers] of cases) {
      const r = await raw(t, 'POST', '/v2/orders', { body: JSON.stringify(body) });
      expectProblem(r, 400, 'validation-failed');
      const got = (r.body.errors as Array<{ pointer: string }>).map((e) => e.pointer);
      for (const p of pointers) expect(got, name).toContain(p);
    }
    const noBody = await raw(t, 'POST', '/v2/orders', { headers: { 'content-type': 'application/json' } });
    expectProblem(noBody, 400, 'validation-failed');

    // Prototype-pollution keys are unknown fields like any other, and pollute nothing.
    for (const text of [
      '{"merchantReference":"cart-7781","amountMinor":4999,"__proto__":{"polluted":true}}',
      '{"merchantReference":"cart-7781","amountMinor":4999,"constructor":{"prototype":{"polluted":true}}}',
      '{"merchantReference":"cart-7781","amountMinor":4999,"prototype":{"polluted":true}}',
    ]) {
      const r = await raw(t, 'POST', '/v2/orders', { body: text });
      expectProblem(r, 400, 'validation-failed');
      expect((r.body.errors as Array<{ pointer: string }>)[0]!.pointer).toMatch(/^\/body\/(__proto__|constructor|prototype)$/);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    expectProblem(await raw(t, 'POST', '/v2/orders', { body: '{"merchantReference":"cart-7781","amountMinor":' }), 400, 'malformed-json');
    expectProblem(await raw(t, 'POST', '/v2/orders', { body: "{'merchantReference':'cart-7781'}" }), 400, 'malformed-json');
    expectProblem(await raw(t, 'POST', '/v2/orders', { body: JSON.stringify(valid), contentType: 'text/plain' }), 415, 'unsupported-media-type');
    expectProblem(await raw(t, 'POST', '/v2/orders', { body: 'merchantReference=cart-7781&amountMinor=4999', contentType: 'application/x-www-form-urlencoded' }), 415, 'unsupported-media-type');
    expectProblem(await raw(t, 'POST', '/v2/orders', { body: JSON.stringify({ ...valid, merchantReference: 'r'.repeat(70 * 1024) }) }), 413, 'payload-too-large');

    // Nothing was written: no event, and the first order to succeed is the environment's first.
    expect(await allEvents(t)).toEqual([]);
    expect((await createOrder(t, valid)).orderNumber).toBe('ORD-000001');
    expect(await allEvents(t)).toHaveLength(1);
  });
});

describe('isolation', () => {
  it('keeps every order, payment and event of a tenant invisible to another tenant', async () => {
    const a = await server.newTenant();
    const b = await server.newTenant();
    const order = await createOrder(a);
    await deposit(a, order.orderId, '49990000');

    const answers = [
      await b.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: order.orderId } } }),
      await b.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } }),
    ];
    for (const r of answers) {
      expect(r.response.status).toBe(404);
      expect(r.error).toMatchObject({ type: `${PROBLEM}not-found` });
    }
    expect(await allEvents(b)).toEqual([]);
    expect(await allEvents(a)).toHaveLength(2);
  });

  it('keeps the test and live environments of one tenant apart', async () => {
    const t = await server.newTenant();
    const live = await keyWith(t, ['orders_read', 'orders_write'], 'live');
    const testOrder = await createOrder(t);
    const liveOrder = await createOrder(live, USD_ONLY);

    expect((await live.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: testOrder.orderId } } })).response.status).toBe(404);
    expect((await live.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: testOrder.orderId } } })).response.status).toBe(404);
    expect((await t.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: liveOrder.orderId } } })).response.status).toBe(404);
    expect((await t.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: liveOrder.orderId } } })).response.status).toBe(404);
    expect((await live.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: liveOrder.orderId } } })).data).toEqual(liveOrder);

    expect((await allEvents(live)).map((e) => e.data.orderId)).toEqual([liveOrder.orderId]);
    expect((await allEvents(t)).map((e) => e.data.orderId)).toEqual([testOrder.orderId]);
  });
});
