// The Transactions API end to end: a user's transactions and the transaction search.
import { describe, expect, it } from 'vitest';
import { type TestTenant } from '../testing/harness.ts';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import { expectProblem } from '../testing/raw-http.ts';
import { setupServer, START, server, clock, send, credsOf, envId, listOf, payout, unlinkedPayment } from './testing/transactions.ts';

setupServer();

describe('GET /transactions/users', () => {
  it('lists newest first, honours limit and narrows with transactionId', async () => {
    const t = await server.newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      clock.set(START + i * 1000);
      const r = await payout(t, { userId: 'u-list', amount: i + 1 });
      ids.push(r.data!.transactionId);
    }
    await payout(t, { userId: 'u-other', amount: 1 });

    const all = await listOf(t, 'u-list');
    expect(all.map((x) => x.id)).toEqual([...ids].reverse());
    expect(all.map((x) => x.amount)).toEqual([4, 3, 2, 1]);

    const two = await t.transactions.GET('/transactions/users', { params: { query: { userId: 'u-list', limit: 2 } } });
    expect(two.data?.map((x) => x.id)).toEqual([ids[3], ids[2]]);
    // The answer's headers: JSON, the next page's cursor and the request id (router.ts builds them).
    expect(two.response.headers.get('content-type')).toBe('application/json');
    expect(two.response.headers.get('next-cursor')).toMatch(/\S/);
    expect(two.response.headers.get('x-request-id')).toMatch(/^req_/);

    const one = await t.transactions.GET('/transactions/users', { params: { query: { userId: 'u-list', transactionId: ids[1]! } } });
    expect(one.data?.map((x) => x.id)).toEqual([ids[1]]);

    // Another user's transaction, or an unknown id, narrows to nothing.
    const foreign = await t.transactions.GET('/transactions/users', { params: { query: { userId: 'u-other', transactionId: ids[1]! } } });
    expect(foreign.data).toEqual([]);
    expect(await listOf(t, 'nobody-at-all')).toEqual([]);
  });

  it('pages past any limit with the Next-Cursor header, and refuses a cursor of another list', async () => {
    const t = await server.newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      // Two payouts per millisecond: the cursor breaks ties like the order does.
      clock.set(START + Math.floor(i / 2) * 1000);
      ids.push((await payout(t, { userId: 'u-pages', amount: i + 1 })).data!.transactionId);
    }
    const page = (cursor?: string) => t.transactions.GET('/transactions/users', { params: { query: { userId: 'u-pages', limit: 2, ...(cursor ? { cursor } : {}) } } });
    const seen: string[] = [];
    const cursors: string[] = [];
    let next: string | null = null;
    do {
      const r = await page(next ?? undefined);
      expect(r.response.status).toBe(200);
      seen.push(...r.data!.map((x) => x.id));
      next = r.response.headers.get('next-cursor');
      if (next !== null) cursors.push(next);
    } while (next !== null);
    expect(seen).toEqual([...ids].reverse());
    expect(cursors).toHaveLength(2);
    for (const c of cursors) expect(c).toMatch(/^[A-Za-z0-9_-]+$/);

    // Another user's list, and a cursor this service did not issue: 400 on /query/cursor.
    for (const [userId, cursor] of [
      ['u-someone-else', cursors[0]!],
      ['u-pages', 'bm90LWEtY3Vyc29y'],
      ['u-pages', 'not a cursor'],
    ] as const) {
      const r = await send(credsOf(t), 'GET', `/transactions/users?userId=${userId}&cursor=${encodeURIComponent(cursor)}`);
      expectProblem(r, 400, 'validation-failed');
      expect((r.body.errors as Array<{ pointer: string }>).map((e) => e.pointer)).toEqual(['/query/cursor']);
    }
  });

  it('presents optional fields as absent, never null', async () => {
    const t = await server.newTenant();
    await payout(t, { userId: 'u-shape', amount: 1 });
    await unlinkedPayment(t, 'u-shape', 2, '0xfeed');
    const res = await fetch(`${server.url}/transactions/users?userId=u-shape`, { headers: { 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash } });
    const text = await res.text();
    expect(text).not.toContain('null');
    const items = JSON.parse(text) as Array<Record<string, unknown>>;
    const paymentItem = items.find((x) => x.type === 'payment')!;
    expect(Object.keys(paymentItem).sort()).toEqual(['amount', 'createdDate', 'id', 'side', 'status', 'tenantId', 'txHash', 'type', 'userId']);
    const payoutItem = items.find((x) => x.type === 'payout')!;
    expect(Object.keys(payoutItem).sort()).toEqual(['amount', 'createdDate', 'id', 'side', 'status', 'tenantId', 'thirdPartyId', 'type', 'userId']);
  });
});

describe('GET /transactions', () => {
  async function orderPayment(t: TestTenant, fields: { orderNumber: string; txHash: string; at: number; amount: string; baseUnits: string }): Promise<string> {
    // An order deposit as the orders module records it (type payment with orderId, orderNumber, txHash).
    const environmentId = await envId(t.tenantId);
    const id = `txn_${fields.at.toString(36).toUpperCase()}${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
    await server.services.store.transaction((tx) =>
      tx.transactions.insert({
        id,
        environmentId,
        tenantId: t.tenantId,
        type: 'payment',
        side: 'credit',
        status: 'completed',
        userId: null,
        amount: fields.amount,
        amountBaseUnits: fields.baseUnits,
        thirdPartyId: null,
        notifyUrl: null,
        asset: null,
        durationInMonths: null,
        orderId: '3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90',
        orderNumber: fields.orderNumber,
        txHash: fields.txHash,
        verified: true,
        refundEmail: null,
        createdAt: fields.at,
        completedAt: fields.at,
      }),
    );
    return id;
  }

  it('finds one transaction by txHash, by orderNumber (most recent) or by both (both must match)', async () => {
    const t = await server.newTenant();
    clock.set(START);
    const pay = await unlinkedPayment(t, 'user_5521', 75.5, '0xb37cf8507a5f17d709eb4dd3090ce4a7262d99af3fdf38cd85890fd3ef2ecad2');
    const byHash = await t.transactions.GET('/transactions', { params: { query: { txHash: '0xb37cf8507a5f17d709eb4dd3090ce4a7262d99af3fdf38cd85890fd3ef2ecad2' }, header: { 'x-tenant-id': t.tenantId } } });
    expect(byHash.response.status).toBe(200);
    expect(byHash.data).toEqual({
      id: pay.id,
      userId: 'user_5521',
      tenantId: t.tenantId,
      status: 'pending_confirmation',
      side: 'credit',
      type: 'payment',
      amount: 75.5,
      txHash: '0xb37cf8507a5f17d709eb4dd3090ce4a7262d99af3fdf38cd85890fd3ef2ecad2',
      createdDate: '2026-11-20T14:02:11.480Z',
    });

    const older = await orderPayment(t, { orderNumber: 'ORD-000042', txHash: '0xaaa1', at: START + 1000, amount: '50', baseUnits: '50000000' });
    const newer = await orderPayment(t, { orderNumber: 'ORD-000042', txHash: '0xaaa2', at: START + 2000, amount: '49.99', baseUnits: '49990000' });
    const search = (query: { orderNumber?: string; txHash?: string }) => t.transactions.GET('/transactions', { params: { query, header: { 'x-tenant-id': t.tenantId } } });

    const byOrder = await search({ orderNumber: 'ORD-000042' });
    expect(byOrder.data).toEqual({
      id: newer,
      tenantId: t.tenantId,
      status: 'completed',
      side: 'credit',
      type: 'payment',
      orderId: '3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90',
      orderNumber: 'ORD-000042',
      amount: 49.99,
      amountBaseUnits: '49990000',
      txHash: '0xaaa2',
      createdDate: '2026-11-20T14:02:13.480Z',
      completedDate: '2026-11-20T14:02:13.480Z',
    });
    expect((await search({ orderNumber: 'ORD-000042', txHash: '0xaaa1' })).data?.id).toBe(older);
    const mismatch = await search({ orderNumber: 'ORD-000042', txHash: pay.txHash! });
    expect(mismatch.response.status).toBe(404);
    expect(mismatch.error?.type).toBe(`${PROBLEM_TYPE_BASE}not-found`);
  });

  it('answers 400 search-parameter-required without orderNumber and txHash, and 404 on a miss', async () => {
    const t = await server.newTenant();
    const none = await send(credsOf(t), 'GET', '/transactions');
    expectProblem(none, 400, 'search-parameter-required');
    expect(none.body.detail).toBe('Either orderNumber or txHash is required');
    const miss = await send(credsOf(t), 'GET', '/transactions?orderNumber=ORD-000099');
    expectProblem(miss, 404, 'not-found');
    expect(miss.body.detail).toContain('ORD-000099');
  });
});
