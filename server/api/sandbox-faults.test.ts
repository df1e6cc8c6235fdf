// POST /sandbox/faults/next-write over HTTP, through the typed client: the next write of the
// environment is stored and answered 504 outcome-unknown (a lost commit), or answered 503
// store-unavailable with nothing written; a retry with the same Idempotency-Key or thirdPartyId
// settles it; one write uses the fault, a refused write keeps it, and no other environment
// sees it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';

const PROBLEM = 'https://errors.payments.example/';
const ORDER = { merchantReference: 'cart-fault', amountMinor: 1250, assetId: 'USDC', networkId: 'ethereum', amountBaseUnits: '12500000' };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function arm(t: TestTenant, fault: 'outcome-unknown' | 'store-unavailable' | 'none'): Promise<void> {
  const r = await t.sandbox.POST('/sandbox/faults/next-write', { body: { fault } });
  expect(r.response.status).toBe(200);
  expect(r.data).toEqual({ environment: 'test', fault });
}

const createOrder = (t: TestTenant, key: string) => t.orders.POST('/v2/orders', { body: ORDER, params: { header: { 'idempotency-key': key } } });
const orderCount = async (t: TestTenant): Promise<number> => (await t.orders.GET('/v2/events', { params: { query: { type: 'order.created', limit: 100 } } })).data!.data.length;

describe('POST /sandbox/faults/next-write', () => {
  it('outcome-unknown: the order is stored, answered 504 with Retry-After; the same Idempotency-Key replays it, one order in all', async () => {
    const t = await server.newTenant();
    await arm(t, 'outcome-unknown');
    const lost = await createOrder(t, 'lost-1');
    expect(lost.response.status).toBe(504);
    expect(lost.response.headers.get('retry-after')).toBe('2');
    expect((lost.error as { type?: string }).type).toBe(`${PROBLEM}outcome-unknown`);
    const retry = await createOrder(t, 'lost-1');
    expect(retry.response.status).toBe(201);
    expect(retry.response.headers.get('idempotent-replayed')).toBe('true');
    expect(await orderCount(t)).toBe(1);
    // Used by one write: the next one is answered as usual.
    expect((await createOrder(t, 'lost-2')).response.status).toBe(201);
  });

  it('outcome-unknown on a payout: the same thirdPartyId answers 409 with the stored transaction', async () => {
    const t = await server.newTenant();
    await arm(t, 'outcome-unknown');
    const body = { thirdPartyId: 'fault-payout-1', userId: 'user-1', amount: 10 };
    const lost = await t.transactions.POST('/transactions/payout', { body });
    expect(lost.response.status).toBe(504);
    const retry = await t.transactions.POST('/transactions/payout', { body });
    expect(retry.response.status).toBe(409);
    const existing = (retry.error as { existingTransactionId?: string }).existingTransactionId;
    const environmentId = await server.environmentId(t.tenantId);
    const stored = await server.services.store.read((tx) => tx.transactions.findByThirdPartyId(environmentId, 'payout', 'fault-payout-1'));
    expect(stored).not.toBeNull();
    expect(existing).toBe(stored!.id);
  });

  it('store-unavailable: 503 with Retry-After, nothing written; the retry creates the order', async () => {
    const t = await server.newTenant();
    await arm(t, 'store-unavailable');
    const refused = await createOrder(t, 'down-1');
    expect(refused.response.status).toBe(503);
    expect(refused.response.headers.get('retry-after')).toBe('5');
    expect((refused.error as { type?: string }).type).toBe(`${PROBLEM}store-unavailable`);
    expect(await orderCount(t)).toBe(0);
    const retry = await createOrder(t, 'down-1');
    expect(retry.response.status).toBe(201);
    expect(retry.response.headers.get('idempotent-replayed')).toBeNull();
    expect(await orderCount(t)).toBe(1);
  });

  it('a refused write keeps the fault for the next one; reads and other environments never see it', async () => {
    const [t, other] = [await server.newTenant(), await server.newTenant()];
    await arm(t, 'outcome-unknown');
    expect((await other.orders.POST('/v2/orders', { body: ORDER })).response.status).toBe(201);
    expect((await t.sandbox.GET('/sandbox/wallet')).response.status).toBe(200);
    const invalid = await t.orders.POST('/v2/orders', { body: { ...ORDER, amountMinor: -1 } });
    expect(invalid.response.status).toBe(400);
    expect((await createOrder(t, 'after-400')).response.status).toBe(504);
  });

  it('of two writes that start together, exactly one takes the fault', async () => {
    const t = await server.newTenant();
    await arm(t, 'outcome-unknown');
    const statuses = (await Promise.all([createOrder(t, 'race-1'), createOrder(t, 'race-2')])).map((r) => r.response.status).sort();
    expect(statuses).toEqual([201, 504]);
    expect(await orderCount(t)).toBe(2);
    expect((await createOrder(t, 'race-3')).response.status).toBe(201);
  });

  it('a key that may only read cannot arm a fault; one write permission is enough', async () => {
    const t = await server.newTenant();
    const reader = await server.keyWith(t, ['transactions_read', 'orders_read']);
    const refused = await reader.sandbox.POST('/sandbox/faults/next-write', { body: { fault: 'store-unavailable' } });
    expect(refused.response.status).toBe(403);
    expect((refused.error as { type?: string }).type).toBe(`${PROBLEM}permission-denied`);
    expect((await createOrder(t, 'not-armed')).response.status).toBe(201);
    const writer = await server.keyWith(t, ['refunds']);
    expect((await writer.sandbox.POST('/sandbox/faults/next-write', { body: { fault: 'store-unavailable' } })).response.status).toBe(200);
    expect((await createOrder(t, 'armed-by-writer')).response.status).toBe(503);
  });

  it('none disarms an armed fault', async () => {
    const t = await server.newTenant();
    await arm(t, 'store-unavailable');
    await arm(t, 'none');
    expect((await createOrder(t, 'disarmed')).response.status).toBe(201);
  });

  it('refuses an unknown fault with 400 validation-failed', async () => {
    const t = await server.newTenant();
    const r = await t.sandbox.POST('/sandbox/faults/next-write', { body: { fault: 'disk-on-fire' as 'outcome-unknown' } });
    expect(r.response.status).toBe(400);
    expect((r.error as { type?: string }).type).toBe(`${PROBLEM}validation-failed`);
  });
});
