// The sandbox's money operations end to end: the test wallet, unlinked payments and payout
// settlement with its payout-completed callback, over loopback HTTP with the typed client.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../domain/clock.ts';
import type { TransactionRecord } from '../domain/model.ts';
import { ALL_PERMISSIONS } from '../domain/model.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import { expectProblem, keyOf, sendRaw, type RawAnswer } from '../testing/raw-http.ts';
import { until } from '../../testing/until.ts';

const START = Date.UTC(2026, 10, 20, 14, 2, 11, 480);

// The generated request type marks durationInMonths required because the schema gives it a
// default (openapi-typescript's defaultNonNullable); the contract makes it optional, and
// these tests must be able to leave it out.

let server: TestServer;
const clock = new ManualClock(START);

// A payout-callback receiver that accepts connections and never answers, so a callback
// stays pending (in flight) however fast a delivery engine picks it up.
let receiver: Server;
let receiverUrl: string;
const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];

beforeAll(async () => {
  server = await startTestServer({ clock, env: { RATE_LIMIT_RPS: '0' } });
  receiver = createServer((req) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/payouts/completed`;
});
afterAll(async () => {
  // Receiver first: its hanging requests end, so the delivery engine has nothing to drain.
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  await server?.close();
});

// ---- helpers ---------------------------------------------------------------------------

const send = (...args: Parameters<typeof sendRaw> extends [string, ...infer R] ? R : never): Promise<RawAnswer> => sendRaw(server.url, ...args);

async function stored(tenantId: string, id: string): Promise<TransactionRecord | null> {
  const environmentId = await server.environmentId(tenantId);
  return server.services.store.transaction((tx) => tx.transactions.get(environmentId, id));
}

async function balance(t: TestTenant): Promise<string> {
  const { data, error } = await t.sandbox.GET('/sandbox/wallet');
  if (!data) throw new Error(`wallet unreadable: ${JSON.stringify(error)}`);
  return data.balance;
}

async function listOf(t: TestTenant, userId: string) {
  const { data } = await t.transactions.GET('/transactions/users', { params: { query: { userId } } });
  if (!data) throw new Error('list failed');
  return data;
}

let seq = 0;
const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${++seq}`;

async function newPayout(t: TestTenant, amount: number, notifyUrl?: string, userId = 'user_5521'): Promise<string> {
  const { data, error } = await t.transactions.POST('/transactions/payout', {
    body: { thirdPartyId: unique('po'), userId, amount, ...(notifyUrl ? { notifyUrl } : {}) },
  });
  if (!data) throw new Error(`payout failed: ${JSON.stringify(error)}`);
  return data.transactionId;
}

async function callbacksOf(tenantId: string) {
  const environmentId = await server.environmentId(tenantId);
  return server.services.store.transaction(async (tx) => {
    const deliveries = (await tx.deliveries.list(environmentId, { q: null, limit: 100, cursor: null })).items.filter((d) => d.kind === 'payout_callback');
    const events = (await tx.events.list(environmentId, { types: ['payout.completed'], limit: 100, cursor: null })).items;
    return { deliveries, events };
  });
}

const waitFor = <T>(find: () => T | undefined, ms = 5000): Promise<T> => until(() => find() ?? false, 'the callback', ms) as Promise<T>;

const sandboxOps = (payoutId: string) =>
  [
    { op: 'getSandboxWallet', permission: null, method: 'GET', path: '/sandbox/wallet' },
    { op: 'fundSandboxWallet', permission: 'payouts', method: 'POST', path: '/sandbox/wallet/fund', json: { amount: 5000 } },
    { op: 'createSandboxPayment', permission: 'refunds', method: 'POST', path: '/sandbox/payments', json: { userId: 'user_5521', amount: 75.5, txHash: '0xb37c' } },
    { op: 'settleSandboxPayout', permission: 'payouts', method: 'POST', path: `/sandbox/payouts/${payoutId}/settle`, json: { status: 'cancelled' } },
  ] as const;

// ---- authentication and environments ----------------------------------------------------

describe('sandbox money: credentials', () => {
  it('answers 401 to missing or wrong credentials and 403 live-key-not-allowed to a live key, changing nothing', async () => {
    const t = await server.newTenant();
    const payoutId = await newPayout(t, 10);
    const live = await server.keyWith(t, ALL_PERMISSIONS, 'live');
    for (const o of sandboxOps(payoutId)) {
      const init = 'json' in o ? { json: o.json } : {};
      expectProblem(await send(null, o.method, o.path, init), 401, 'unauthenticated');
      expectProblem(await send({ apiKey: t.apiKey, apiHash: 'sk_test_wrong' }, o.method, o.path, init), 401, 'unauthenticated');
      expectProblem(await send(keyOf(live), o.method, o.path, init), 403, 'live-key-not-allowed');
    }
    expect(await balance(t)).toBe('999990');
    expect((await stored(t.tenantId, payoutId))?.status).toBe('pending');
    expect((await listOf(t, 'user_5521')).map((x) => x.type)).toEqual(['payout']);
  });

  it('answers 403 permission-denied without the operation permission; any test key reads the wallet', async () => {
    const t = await server.newTenant();
    const payoutId = await newPayout(t, 10);
    for (const o of sandboxOps(payoutId)) {
      if (o.permission === null) continue;
      const k = await server.keyWith(
        t,
        ALL_PERMISSIONS.filter((p) => p !== o.permission),
      );
      const a = await send(keyOf(k), o.method, o.path, 'json' in o ? { json: o.json } : {});
      expectProblem(a, 403, 'permission-denied');
      expect(a.body.detail).toContain(o.permission);
    }
    const readOnly = await server.keyWith(t, ['orders_read']);
    const wallet = await readOnly.sandbox.GET('/sandbox/wallet');
    expect(wallet.data).toEqual({ environment: 'test', balance: '999990' });
    const noPerms = await server.keyWith(t, []);
    expect((await noPerms.sandbox.GET('/sandbox/wallet')).data).toEqual({ environment: 'test', balance: '999990' });
    expect((await stored(t.tenantId, payoutId))?.status).toBe('pending');
  });
});

// ---- wallet -----------------------------------------------------------------------------------

describe('the test wallet', () => {
  it('starts at 1000000 and adds funding exactly: 0.1 + 0.2 = 0.3', async () => {
    const t = await server.newTenant();
    expect((await t.sandbox.GET('/sandbox/wallet')).data).toEqual({ environment: 'test', balance: '1000000' });
    const first = await t.sandbox.POST('/sandbox/wallet/fund', { body: { amount: 0.1 } });
    expect(first.response.status).toBe(200);
    expect(first.data).toEqual({ environment: 'test', balance: '1000000.1' });
    const second = await t.sandbox.POST('/sandbox/wallet/fund', { body: { amount: 0.2 } });
    expect(second.data).toEqual({ environment: 'test', balance: '1000000.3' });
    expect(await balance(t)).toBe('1000000.3');
  });

  it('funds 9999999.99999999 and the smallest unit exactly, also in parallel', async () => {
    const t = await server.newTenant();
    await t.sandbox.POST('/sandbox/wallet/fund', { body: { amount: 9999999.99999999 } });
    expect(await balance(t)).toBe('10999999.99999999');
    await t.sandbox.POST('/sandbox/wallet/fund', { body: { amount: 0.00000001 } });
    expect(await balance(t)).toBe('11000000');
    await Promise.all(Array.from({ length: 30 }, () => t.sandbox.POST('/sandbox/wallet/fund', { body: { amount: 0.01 } })));
    expect(await balance(t)).toBe('11000000.3');
  });

  it('refuses hostile funding and leaves the wallet unchanged', async () => {
    const t = await server.newTenant();
    const cases: Array<[string, number, string]> = [];
    for (const body of [
      { amount: -5 },
      { amount: 0 },
      { amount: 0.1 + 0.2 },
      { amount: 1e-9 },
      { amount: 1e13 },
      { amount: '5000' },
      { amount: 'NaN' },
      { amount: null },
      {},
      { amount: 5, currency: 'USD' },
      { amount: 5, constructor: 'x' },
      [{ amount: 5 }],
    ]) {
      const a = await send(keyOf(t), 'POST', '/sandbox/wallet/fund', { json: body });
      cases.push([JSON.stringify(body), a.status, a.body.type ?? '']);
    }
    for (const [body, status, type] of cases) expect({ body, status, type }).toEqual({ body, status: 400, type: `${PROBLEM_TYPE_BASE}validation-failed` });
    expectProblem(await send(keyOf(t), 'POST', '/sandbox/wallet/fund', { text: '{"amount":5,"__proto__":{"amount":1}}' }), 400, 'validation-failed');
    expectProblem(await send(keyOf(t), 'POST', '/sandbox/wallet/fund', { text: '{"amount":' }), 400, 'malformed-json');
    expectProblem(await send(keyOf(t), 'POST', '/sandbox/wallet/fund', { text: '{"amount":5}', contentType: 'text/plain' }), 415, 'unsupported-media-type');
    expectProblem(await send(keyOf(t), 'POST', '/sandbox/wallet/fund', { json: { amount: 5, pad: 'x'.repeat(70 * 1024) } }), 413, 'payload-too-large');
    expect(await balance(t)).toBe('1000000');
  });
});

// ---- unlinked payments ---------------------------------------------------------------------

describe('POST /sandbox/payments', () => {
  it('creates a payment in pending_confirmation that the Transactions API finds', async () => {
    const t = await server.newTenant();
    clock.set(START);
    const txHash = '0xb37cf8507a5f17d709eb4dd3090ce4a7262d99af3fdf38cd85890fd3ef2ecad2';
    const { data, response } = await t.sandbox.POST('/sandbox/payments', { body: { userId: 'user_5521', amount: 75.5, txHash } });
    expect(response.status).toBe(201);
    expect(data).toEqual({
      id: expect.stringMatching(/^txn_[0-9A-Z]{26}$/),
      userId: 'user_5521',
      tenantId: t.tenantId,
      status: 'pending_confirmation',
      side: 'credit',
      type: 'payment',
      amount: 75.5,
      txHash,
      createdDate: '2026-11-20T14:02:11.480Z',
    });
    const found = await t.transactions.GET('/transactions', { params: { query: { txHash }, header: { 'x-tenant-id': t.tenantId } } });
    expect(found.data).toEqual(data);
    expect(await listOf(t, 'user_5521')).toEqual([
      { id: data!.id, userId: 'user_5521', tenantId: t.tenantId, status: 'pending_confirmation', amount: 75.5, type: 'payment', side: 'credit', createdDate: '2026-11-20T14:02:11.480Z', txHash },
    ]);
    expect(await balance(t)).toBe('1000000');
    expect(await stored(t.tenantId, data!.id)).toMatchObject({ amount: '75.5', orderId: null, orderNumber: null, thirdPartyId: null });
  });

  it('keeps 9999999.99999999 exact', async () => {
    const t = await server.newTenant();
    const res = await send(keyOf(t), 'POST', '/sandbox/payments', { text: '{"userId":"u-big","amount":9999999.99999999,"txHash":"0xbig"}' });
    expect(res.status).toBe(201);
    expect(res.body.amount).toBe(9999999.99999999);
    expect((await stored(t.tenantId, String(res.body.id)))?.amount).toBe('9999999.99999999');
  });

  it('refuses hostile payments and writes nothing', async () => {
    const t = await server.newTenant();
    const ok = { userId: 'u-hostile', amount: 1, txHash: '0xabc' };
    for (const body of [
      { ...ok, userId: 'üser' },
      { ...ok, userId: '' },
      { ...ok, userId: 'u'.repeat(129) },
      { ...ok, amount: 0 },
      { ...ok, amount: -1 },
      { ...ok, amount: 1.000000001 },
      { ...ok, amount: '1' },
      { ...ok, txHash: '0x-abc' },
      { ...ok, txHash: 'a'.repeat(129) },
      { ...ok, orderId: '3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90' },
      { userId: 'u-hostile', amount: 1 },
      [ok],
    ]) {
      expectProblem(await send(keyOf(t), 'POST', '/sandbox/payments', { json: body }), 400, 'validation-failed');
    }
    expectProblem(await send(keyOf(t), 'POST', '/sandbox/payments', { text: '{"userId":"u-hostile","amount":1,"txHash":"0xabc","__proto__":{}}' }), 400, 'validation-failed');
    expect(await listOf(t, 'u-hostile')).toEqual([]);
  });
});

// ---- settlement -----------------------------------------------------------------------------

describe('POST /sandbox/payouts/{transactionId}/settle', () => {
  it('completes a pending payout: completed, completedDate set, wallet unchanged, no callback without notifyUrl', async () => {
    const t = await server.newTenant();
    clock.set(START);
    const id = await newPayout(t, 150.25);
    clock.set(START + 334_000 - 478);
    const { data, response } = await t.sandbox.POST('/sandbox/payouts/{transactionId}/settle', { params: { path: { transactionId: id } }, body: { status: 'success' } });
    expect(response.status).toBe(200);
    expect(data).toEqual({
      id,
      userId: 'user_5521',
      tenantId: t.tenantId,
      status: 'completed',
      side: 'credit',
      type: 'payout',
      amount: 150.25,
      thirdPartyId: expect.any(String),
      createdDate: '2026-11-20T14:02:11.480Z',
      completedDate: '2026-11-20T14:07:45.002Z',
    });
    expect(await balance(t)).toBe('999849.75');
    const [item] = await listOf(t, 'user_5521');
    expect(item).toMatchObject({ status: 'completed', completedDate: '2026-11-20T14:07:45.002Z' });
    const cb = await callbacksOf(t.tenantId);
    expect(cb.events).toEqual([]);
    expect(cb.deliveries).toEqual([]);

    const twice = await send(keyOf(t), 'POST', `/sandbox/payouts/${id}/settle`, { json: { status: 'cancelled' } });
    expectProblem(twice, 409, 'not-settleable');
    expect(twice.body.detail).toContain('completed');
    expect(await balance(t)).toBe('999849.75');
    expect((await stored(t.tenantId, id))?.status).toBe('completed');
  });

  it('cancels a pending payout and returns its amount to the wallet exactly', async () => {
    const t = await server.newTenant();
    const id = await newPayout(t, 0.00125);
    await newPayout(t, 0.1);
    expect(await balance(t)).toBe('999999.89875');
    const { data } = await t.sandbox.POST('/sandbox/payouts/{transactionId}/settle', { params: { path: { transactionId: id } }, body: { status: 'cancelled' } });
    expect(data).toMatchObject({ id, status: 'cancelled', amount: 0.00125, completedDate: expect.any(String) });
    expect(await balance(t)).toBe('999999.9');
    expectProblem(await send(keyOf(t), 'POST', `/sandbox/payouts/${id}/settle`, { json: { status: 'cancelled' } }), 409, 'not-settleable');
    expect(await balance(t)).toBe('999999.9');
  });

  it('records the payout-completed callback with the settlement, as a pending delivery to notifyUrl', async () => {
    const t = await server.newTenant();
    clock.set(START);
    const { data: created } = await t.transactions.POST('/transactions/payout', {
      body: { thirdPartyId: 'merchant-payout-2026-000183', userId: 'user_5521', amount: 150.25, notifyUrl: receiverUrl },
    });
    const cancelledId = await newPayout(t, 0.00125, receiverUrl, 'user_7310');
    expect((await callbacksOf(t.tenantId)).deliveries).toEqual([]);

    clock.set(START + 60_000);
    await t.sandbox.POST('/sandbox/payouts/{transactionId}/settle', { params: { path: { transactionId: created!.transactionId } }, body: { status: 'success' } });
    await t.sandbox.POST('/sandbox/payouts/{transactionId}/settle', { params: { path: { transactionId: cancelledId } }, body: { status: 'cancelled' } });

    const { deliveries, events } = await callbacksOf(t.tenantId);
    expect(events).toHaveLength(2);
    const success = events.find((e) => e.transactionId === created!.transactionId)!;
    expect(success.type).toBe('payout.completed');
    expect(JSON.parse(success.payload)).toEqual({
      transactionId: created!.transactionId,
      thirdPartyId: 'merchant-payout-2026-000183',
      amount: 150.25,
      status: 'success',
    });
    const cancelled = events.find((e) => e.transactionId === cancelledId)!;
    expect(JSON.parse(cancelled.payload)).toMatchObject({ transactionId: cancelledId, amount: 0.00125, status: 'cancelled' });

    expect(deliveries).toHaveLength(2);
    const delivery = deliveries.find((d) => d.eventId === success.id)!;
    expect(delivery).toMatchObject({
      kind: 'payout_callback',
      state: 'pending',
      url: receiverUrl,
      endpointId: null,
      transactionId: created!.transactionId,
      cycle: 1,
    });
    expect(deliveries.find((d) => d.eventId === cancelled.id)).toMatchObject({ kind: 'payout_callback', state: 'pending', url: receiverUrl });

    // The delivery engine sends exactly the recorded payload, signed, to notifyUrl.
    const sent = await waitFor(() => received.find((r) => r.headers['service-event-id'] === success.id));
    expect(sent.body).toBe(success.payload);
    expect(sent.headers['service-signature']).toMatch(/^t=\d{1,12},v1=[0-9a-f]{64}$/);
  });

  it('records no callback when the settlement is refused', async () => {
    const t = await server.newTenant();
    const id = await newPayout(t, 3, receiverUrl);
    await t.sandbox.POST('/sandbox/payouts/{transactionId}/settle', { params: { path: { transactionId: id } }, body: { status: 'success' } });
    expectProblem(await send(keyOf(t), 'POST', `/sandbox/payouts/${id}/settle`, { json: { status: 'success' } }), 409, 'not-settleable');
    const { deliveries, events } = await callbacksOf(t.tenantId);
    expect(events).toHaveLength(1);
    expect(deliveries).toHaveLength(1);
  });

  it('answers 404 to an unknown id, 409 to another type, 400 to a bad status or id', async () => {
    const t = await server.newTenant();
    expectProblem(await send(keyOf(t), 'POST', '/sandbox/payouts/txn_01JD4W9Q6S2V5K8X3M7N0PBRT5/settle', { json: { status: 'success' } }), 404, 'not-found');
    const stake = await t.transactions.POST('/transactions/staking/payout', { body: { thirdPartyId: 'st-1', userId: 'u1', usdAmount: 10, asset: 'KRU' } });
    const notPayout = await send(keyOf(t), 'POST', `/sandbox/payouts/${stake.data!.transactionId}/settle`, { json: { status: 'success' } });
    expectProblem(notPayout, 409, 'not-settleable');
    expect(notPayout.body.detail).toContain('a staking payout');
    const payment = await t.sandbox.POST('/sandbox/payments', { body: { userId: 'u1', amount: 1, txHash: '0x1' } });
    expectProblem(await send(keyOf(t), 'POST', `/sandbox/payouts/${payment.data!.id}/settle`, { json: { status: 'cancelled' } }), 409, 'not-settleable');

    const id = await newPayout(t, 2);
    for (const body of [{ status: 'completed' }, { status: 'SUCCESS' }, {}, { status: 'success', amount: 1 }, ['success']]) {
      expectProblem(await send(keyOf(t), 'POST', `/sandbox/payouts/${id}/settle`, { json: body }), 400, 'validation-failed');
    }
    expectProblem(await send(keyOf(t), 'POST', `/sandbox/payouts/${'x'.repeat(65)}/settle`, { json: { status: 'success' } }), 400, 'validation-failed');
    expectProblem(await send(keyOf(t), 'POST', `/sandbox/payouts/txn%20bad/settle`, { json: { status: 'success' } }), 400, 'validation-failed');
    expectProblem(await send(keyOf(t), 'POST', `/sandbox/payouts/${id}/settle`, { text: '{"status":' }), 400, 'malformed-json');
    expectProblem(await send(keyOf(t), 'POST', `/sandbox/payouts/${id}/settle`, { text: 'status=success', contentType: 'application/x-www-form-urlencoded' }), 415, 'unsupported-media-type');
    expect((await stored(t.tenantId, id))?.status).toBe('pending');
    expect((await stored(t.tenantId, stake.data!.transactionId))?.status).toBe('active');
  });

  it('settles once under 10 parallel settlements, returning the amount at most once', async () => {
    const t = await server.newTenant();
    const id = await newPayout(t, 100);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.sandbox.POST('/sandbox/payouts/{transactionId}/settle', { params: { path: { transactionId: id } }, body: { status: i % 2 === 0 ? 'cancelled' : 'success' } }),
      ),
    );
    const ok = answers.filter((a) => a.response.status === 200);
    expect(ok).toHaveLength(1);
    expect(answers.filter((a) => a.response.status === 409)).toHaveLength(9);
    const final = ok[0]!.data!.status;
    expect(await balance(t)).toBe(final === 'cancelled' ? '1000000' : '999900');
  });

  it("lets tenant B neither settle nor see tenant A's payout", async () => {
    const a = await server.newTenant('A');
    const b = await server.newTenant('B');
    const id = await newPayout(a, 40, receiverUrl);
    expectProblem(await send(keyOf(b), 'POST', `/sandbox/payouts/${id}/settle`, { json: { status: 'cancelled' } }), 404, 'not-found');
    expect((await stored(a.tenantId, id))?.status).toBe('pending');
    expect(await balance(a)).toBe('999960');
    expect(await balance(b)).toBe('1000000');
    expect((await callbacksOf(a.tenantId)).deliveries).toEqual([]);
    expect((await callbacksOf(b.tenantId)).deliveries).toEqual([]);
    // B's funding and payments stay in B.
    await b.sandbox.POST('/sandbox/wallet/fund', { body: { amount: 1 } });
    await b.sandbox.POST('/sandbox/payments', { body: { userId: 'user_5521', amount: 1, txHash: '0xb0b' } });
    expect(await balance(a)).toBe('999960');
    expect((await listOf(a, 'user_5521')).map((x) => x.type)).toEqual(['payout']);
  });
});
