// The Transactions API end to end: staking payouts and their revocation.
import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import { expectProblem } from '../testing/raw-http.ts';
import { setupServer, START, server, clock, send, credsOf, stored, balance, listOf, payout, staking } from './testing/transactions.ts';

setupServer();

describe('staking payouts', () => {
  it('creates an active credit whose amount is usdAmount, 3 months by default, without touching the wallet', async () => {
    const t = await server.newTenant();
    clock.set(START + 60_000);
    const { data, response } = await t.transactions.POST('/transactions/staking/payout', {
      body: { thirdPartyId: 'merchant-stake-2026-000058', userId: 'user_7310', usdAmount: 1000, asset: 'KRU' },
    });
    expect(response.status).toBe(201);
    expect(data).toEqual({ transactionId: expect.stringMatching(/^txn_/), thirdPartyId: 'merchant-stake-2026-000058' });
    expect(await stored(t.tenantId, data!.transactionId)).toMatchObject({ durationInMonths: 3, asset: 'KRU', amount: '1000', status: 'active' });

    const six = await staking(t, { userId: 'user_7310', usdAmount: 250.5, durationInMonths: 6 });
    expect(await stored(t.tenantId, six.data!.transactionId)).toMatchObject({ durationInMonths: 6, amount: '250.5' });
    expect(await balance(t)).toBe('1000000');

    const list = await listOf(t, 'user_7310');
    expect(list).toContainEqual({
      id: data!.transactionId,
      userId: 'user_7310',
      tenantId: t.tenantId,
      status: 'active',
      amount: 1000,
      type: 'staking',
      side: 'credit',
      createdDate: '2026-11-20T14:03:11.480Z',
      thirdPartyId: 'merchant-stake-2026-000058',
      asset: 'KRU',
      durationInMonths: 3,
    });
    expect(list).toContainEqual(expect.objectContaining({ id: six.data!.transactionId, durationInMonths: 6 }));
  });

  it('refuses an asset other than KRU with 400 naming the field', async () => {
    const t = await server.newTenant();
    const a = await send(credsOf(t), 'POST', '/transactions/staking/payout', { json: { thirdPartyId: 'st-btc', userId: 'u-st', usdAmount: 10, asset: 'BTC' } });
    expectProblem(a, 400, 'validation-failed');
    expect(a.body.errors?.map((e) => e.pointer)).toEqual(['/body/asset']);
    expect(await listOf(t, 'u-st')).toEqual([]);
  });

  it('answers 409 with existingTransactionId to a repeated thirdPartyId', async () => {
    const t = await server.newTenant();
    const first = await staking(t, { thirdPartyId: 'merchant-stake-2026-000057', userId: 'u-st' });
    const again = await staking(t, { thirdPartyId: 'merchant-stake-2026-000057', userId: 'other', usdAmount: 1, durationInMonths: 12 });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ type: `${PROBLEM_TYPE_BASE}duplicate-third-party-id`, existingTransactionId: first.data!.transactionId });
    expect(await listOf(t, 'other')).toEqual([]);
  });

  it('revokes an active staking payout once: 200, then 409; completedDate is set', async () => {
    const t = await server.newTenant();
    clock.set(START);
    const st = await staking(t, { thirdPartyId: 'st-revoke', userId: 'u-rv' });
    clock.set(START + 5 * 60_000);
    const { data, response } = await t.transactions.POST('/transactions/staking/payout/revoke', { body: { transactionId: st.data!.transactionId } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ transactionId: st.data!.transactionId, thirdPartyId: 'st-revoke' });
    const [item] = await listOf(t, 'u-rv');
    expect(item).toMatchObject({ status: 'revoked', completedDate: '2026-11-20T14:07:11.480Z', createdDate: '2026-11-20T14:02:11.480Z' });

    const twice = await send(credsOf(t), 'POST', '/transactions/staking/payout/revoke', { json: { transactionId: st.data!.transactionId } });
    expectProblem(twice, 409, 'not-revocable');
    expect(twice.body.detail).toContain('revoked');
  });

  it('answers 404 to an unknown id and 409 to a transaction that is not a staking payout', async () => {
    const t = await server.newTenant();
    expectProblem(await send(credsOf(t), 'POST', '/transactions/staking/payout/revoke', { json: { transactionId: 'txn_01JD4XB7T0H3C9R2E6Y5W1QZMB' } }), 404, 'not-found');
    const po = await payout(t, { userId: 'u-rv', amount: 1 });
    const notStaking = await send(credsOf(t), 'POST', '/transactions/staking/payout/revoke', { json: { transactionId: po.data!.transactionId } });
    expectProblem(notStaking, 409, 'not-revocable');
    expect(notStaking.body.detail).toContain('a payout');
    expect((await stored(t.tenantId, po.data!.transactionId))?.status).toBe('pending');
  });

  it('lets exactly one of 10 parallel revokes through', async () => {
    const t = await server.newTenant();
    const st = await staking(t, { userId: 'u-rv-race' });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => t.transactions.POST('/transactions/staking/payout/revoke', { body: { transactionId: st.data!.transactionId } })),
    );
    expect(answers.filter((a) => a.response.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.response.status === 409)).toHaveLength(9);
  });
});
