// The Transactions API end to end: authentication, permissions and tenant isolation of every operation.
import { describe, expect, it } from 'vitest';
import { createServiceAccount } from '../domain/admin.ts';
import { ALL_PERMISSIONS } from '../domain/model.ts';
import { expectProblem } from '../testing/raw-http.ts';
import { setupServer, server, send, keyFor, allBut, credsOf, stored, balance, listOf, unique, payout, staking, unlinkedPayment, operations } from './testing/transactions.ts';

setupServer();

describe('authentication and authorisation', () => {
  it('answers 401 to missing or wrong credentials on every operation, and writes nothing', async () => {
    const t = await server.newTenant();
    const before = await balance(t);
    for (const o of operations({ stakingId: 'txn_x', paymentId: 'txn_y' })) {
      const init = 'json' in o ? { json: o.json } : {};
      expectProblem(await send(null, o.method, o.path, init), 401, 'unauthenticated');
      expectProblem(await send({ apiKey: t.apiKey }, o.method, o.path, init), 401, 'unauthenticated');
      expectProblem(await send({ apiKey: t.apiKey, apiHash: `${t.apiHash}x` }, o.method, o.path, init), 401, 'unauthenticated');
      expectProblem(await send({ apiKey: 'pk_test_unknown', apiHash: t.apiHash }, o.method, o.path, init), 401, 'unauthenticated');
    }
    expect(await balance(t)).toBe(before);
    expect(await listOf(t, 'user_1')).toEqual([]);
  });

  it('answers 403 permission-denied to a key without the operation permission, and writes nothing', async () => {
    const t = await server.newTenant();
    const st = await staking(t, { userId: 'user_1' });
    const pay = await unlinkedPayment(t, 'user_1');
    await createServiceAccount(server.services, { tenantId: t.tenantId, email: 'ops@merchant.example' });
    const before = await balance(t);
    for (const o of operations({ stakingId: st.data!.transactionId, paymentId: pay.id })) {
      const k = await keyFor(t, allBut(o.permission));
      const a = await send(k.creds, o.method, o.path, 'json' in o ? { json: o.json } : {});
      expectProblem(a, 403, 'permission-denied');
      expect(a.body.detail).toContain(o.permission);
    }
    expect(await balance(t)).toBe(before);
    const list = await listOf(t, 'user_1');
    expect(list.map((x) => [x.type, x.status]).sort()).toEqual([
      ['payment', 'pending_confirmation'],
      ['staking', 'active'],
    ]);
  });

  it('answers 403 tenant-mismatch when x-tenant-id names another tenant, and writes nothing', async () => {
    const a = await server.newTenant('A');
    const b = await server.newTenant('B');
    const st = await staking(a, { userId: 'user_1' });
    const pay = await unlinkedPayment(a, 'user_1');
    await createServiceAccount(server.services, { tenantId: a.tenantId, email: 'ops@merchant.example' });
    const before = await balance(a);
    for (const o of operations({ stakingId: st.data!.transactionId, paymentId: pay.id })) {
      const answer = await send({ ...credsOf(a), tenantId: b.tenantId }, o.method, o.path, 'json' in o ? { json: o.json } : {});
      expectProblem(answer, 403, 'tenant-mismatch');
    }
    expect(await balance(a)).toBe(before);
    expect((await stored(a.tenantId, st.data!.transactionId))?.status).toBe('active');
    expect((await stored(a.tenantId, pay.id))?.status).toBe('pending_confirmation');
    expect(await listOf(a, 'user_1')).toHaveLength(2);
  });

  it('requires x-tenant-id on GET /transactions (400 validation-failed), and accepts it optional elsewhere', async () => {
    const t = await server.newTenant();
    const noTenant = server.clientsFor({ apiKey: t.apiKey, apiHash: t.apiHash });
    const missing = await send({ apiKey: t.apiKey, apiHash: t.apiHash }, 'GET', '/transactions?txHash=0xabc');
    expectProblem(missing, 400, 'validation-failed');
    expect(missing.body.errors).toContainEqual({ pointer: '/header/x-tenant-id', detail: 'is required' });
    const listed = await noTenant.transactions.GET('/transactions/users', { params: { query: { userId: 'nobody' } } });
    expect(listed.response.status).toBe(200);
    expect(listed.data).toEqual([]);
    const created = await noTenant.transactions.POST('/transactions/payout', { body: { thirdPartyId: unique('po'), userId: 'u1', amount: 1 } });
    expect(created.response.status).toBe(201);
  });
});


describe('tenant isolation', () => {
  it('gives tenant B nothing of tenant A, for every operation', async () => {
    const a = await server.newTenant('A');
    const b = await server.newTenant('B');
    await createServiceAccount(server.services, { tenantId: b.tenantId, email: 'ops@b.example' });
    await createServiceAccount(server.services, { tenantId: a.tenantId, email: 'ops@b.example' });
    const po = await payout(a, { thirdPartyId: 'a-payout', userId: 'shared-user', amount: 100 });
    const st = await staking(a, { thirdPartyId: 'a-stake', userId: 'shared-user' });
    const pay = await unlinkedPayment(a, 'shared-user', 20, '0xa11ce');
    const aBefore = await balance(a);

    // Reads
    expect(await listOf(b, 'shared-user')).toEqual([]);
    const narrowed = await b.transactions.GET('/transactions/users', { params: { query: { userId: 'shared-user', transactionId: po.data!.transactionId } } });
    expect(narrowed.data).toEqual([]);
    expectProblem(await send(credsOf(b), 'GET', '/transactions?txHash=0xa11ce'), 404, 'not-found');

    // Changes
    expectProblem(await send(credsOf(b), 'POST', '/transactions/staking/payout/revoke', { json: { transactionId: st.data!.transactionId } }), 404, 'not-found');
    expectProblem(await send(credsOf(b), 'POST', '/transactions/refund', { json: { txId: pay.id, email: 'ops@b.example' } }), 404, 'not-found');
    expectProblem(await send(credsOf(b), 'POST', `/sandbox/payouts/${po.data!.transactionId}/settle`, { json: { status: 'cancelled' } }), 404, 'not-found');
    // The same thirdPartyIds are free in B, and B's payout touches only B's wallet.
    expect((await payout(b, { thirdPartyId: 'a-payout', userId: 'shared-user', amount: 7 })).response.status).toBe(201);
    expect((await staking(b, { thirdPartyId: 'a-stake', userId: 'shared-user' })).response.status).toBe(201);
    expect(await balance(b)).toBe('999993');

    // B's tenant id with A's key.
    expectProblem(await send({ ...credsOf(a), tenantId: b.tenantId }, 'GET', '/transactions/users?userId=shared-user'), 403, 'tenant-mismatch');

    expect(await balance(a)).toBe(aBefore);
    const aList = await listOf(a, 'shared-user');
    expect(aList.map((x) => [x.type, x.status]).sort()).toEqual([
      ['payment', 'pending_confirmation'],
      ['payout', 'pending'],
      ['staking', 'active'],
    ]);
  });

  it('never shows test data to the live environment of the same tenant', async () => {
    const t = await server.newTenant();
    await createServiceAccount(server.services, { tenantId: t.tenantId, email: 'ops@merchant.example' });
    const st = await staking(t, { userId: 'u-env' });
    const pay = await unlinkedPayment(t, 'u-env', 5, '0xdeadbeef');
    const live = await keyFor(t, ALL_PERMISSIONS, 'live');

    expect(await listOf(live, 'u-env')).toEqual([]);
    expectProblem(await send(live.creds, 'GET', '/transactions?txHash=0xdeadbeef'), 404, 'not-found');
    expectProblem(await send(live.creds, 'POST', '/transactions/staking/payout/revoke', { json: { transactionId: st.data!.transactionId } }), 404, 'not-found');
    expectProblem(await send(live.creds, 'POST', '/transactions/refund', { json: { txId: pay.id, email: 'ops@merchant.example' } }), 404, 'not-found');

    // And the other way round: a live staking payout is not in the test list.
    const liveStake = await live.transactions.POST('/transactions/staking/payout', { body: { thirdPartyId: 'live-st', userId: 'u-env', usdAmount: 5, asset: 'KRU' } });
    expect(liveStake.response.status).toBe(201);
    expect((await listOf(t, 'u-env')).map((x) => x.id)).not.toContain(liveStake.data!.transactionId);
    expect((await listOf(live, 'u-env')).map((x) => x.id)).toEqual([liveStake.data!.transactionId]);
    expect((await stored(t.tenantId, st.data!.transactionId))?.status).toBe('active');
  });
});
