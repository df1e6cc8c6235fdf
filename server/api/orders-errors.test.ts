// The v2 order API's documented errors (credentials, permissions, tenant, input) and
// tenant/environment isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { allEvents, deposit, orderTesting, USD_ONLY, WITH_TOKEN } from './testing/orders.ts';
import { expectProblem, keyOf, sendRaw } from '../testing/raw-http.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});
const { createOrder } = orderTesting(() => server, WITH_TOKEN);

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
      expectProblem(await sendRaw(server.url, keyOf(creds), 'POST', '/v2/orders', { text: JSON.stringify(USD_ONLY) }), 401, 'unauthenticated');
      expectProblem(await sendRaw(server.url, keyOf(creds), 'GET', `/v2/orders/${order.orderId}`), 401, 'unauthenticated');
      expectProblem(await sendRaw(server.url, keyOf(creds), 'GET', `/v2/orders/${order.orderId}/payments`), 401, 'unauthenticated');
      expectProblem(await sendRaw(server.url, keyOf(creds), 'GET', '/v2/events'), 401, 'unauthenticated');
    }
    const noHash = await fetch(`${server.url}/v2/events`, { headers: { 'x-api-key': t.apiKey } });
    expect(noHash.status).toBe(401);
    expect(await allEvents(t)).toHaveLength(1);
  });

  it('answers 403 permission-denied per operation for keys without orders_read or orders_write', async () => {
    const t = await server.newTenant();
    const order = await createOrder(t);
    const readOnly = await server.keyWith(t, ['orders_read']);
    const writeOnly = await server.keyWith(t, ['orders_write']);
    const neither = await server.keyWith(t, ['payouts', 'staking', 'transactions_read', 'refunds', 'webhooks_manage']);

    for (const c of [readOnly, neither]) {
      const r = await c.orders.POST('/v2/orders', { body: USD_ONLY });
      expect(r.response.status).toBe(403);
      expect(r.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}permission-denied`, detail: expect.stringContaining('orders_write') });
    }
    for (const c of [writeOnly, neither]) {
      const reads = [
        await c.orders.GET('/v2/orders/{orderId}', { params: { path: { orderId: order.orderId } } }),
        await c.orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId: order.orderId } } }),
        await c.orders.GET('/v2/events'),
      ];
      for (const r of reads) {
        expect(r.response.status).toBe(403);
        expect(r.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}permission-denied`, detail: expect.stringContaining('orders_read') });
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
      expect(r.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}tenant-mismatch`, status: 403 });
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
      const r = await sendRaw(server.url, keyOf(t), 'POST', '/v2/orders', { text: JSON.stringify(body) });
      expectProblem(r, 400, 'validation-failed');
      const got = (r.body.errors as Array<{ pointer: string }>).map((e) => e.pointer);
      for (const p of pointers) expect(got, name).toContain(p);
    }
    const noBody = await sendRaw(server.url, keyOf(t), 'POST', '/v2/orders', { headers: { 'content-type': 'application/json' } });
    expectProblem(noBody, 400, 'validation-failed');

    // Prototype-pollution keys are unknown fields like any other, and pollute nothing.
    for (const text of [
      '{"merchantReference":"cart-7781","amountMinor":4999,"__proto__":{"polluted":true}}',
      '{"merchantReference":"cart-7781","amountMinor":4999,"constructor":{"prototype":{"polluted":true}}}',
      '{"merchantReference":"cart-7781","amountMinor":4999,"prototype":{"polluted":true}}',
    ]) {
      const r = await sendRaw(server.url, keyOf(t), 'POST', '/v2/orders', { text: text });
      expectProblem(r, 400, 'validation-failed');
      expect((r.body.errors as Array<{ pointer: string }>)[0]!.pointer).toMatch(/^\/body\/(__proto__|constructor|prototype)$/);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    expectProblem(await sendRaw(server.url, keyOf(t), 'POST', '/v2/orders', { text: '{"merchantReference":"cart-7781","amountMinor":' }), 400, 'malformed-json');
    expectProblem(await sendRaw(server.url, keyOf(t), 'POST', '/v2/orders', { text: "{'merchantReference':'cart-7781'}" }), 400, 'malformed-json');
    expectProblem(await sendRaw(server.url, keyOf(t), 'POST', '/v2/orders', { text: JSON.stringify(valid), contentType: 'text/plain' }), 415, 'unsupported-media-type');
    expectProblem(await sendRaw(server.url, keyOf(t), 'POST', '/v2/orders', { text: 'merchantReference=cart-7781&amountMinor=4999', contentType: 'application/x-www-form-urlencoded' }), 415, 'unsupported-media-type');
    expectProblem(await sendRaw(server.url, keyOf(t), 'POST', '/v2/orders', { text: JSON.stringify({ ...valid, merchantReference: 'r'.repeat(70 * 1024) }) }), 413, 'payload-too-large');

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
      expect(r.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}not-found` });
    }
    expect(await allEvents(b)).toEqual([]);
    expect(await allEvents(a)).toHaveLength(2);
  });

  it('keeps the test and live environments of one tenant apart', async () => {
    const t = await server.newTenant();
    const live = await server.keyWith(t, ['orders_read', 'orders_write'], 'live');
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
