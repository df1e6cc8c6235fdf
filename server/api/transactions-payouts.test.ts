// The Transactions API end to end: payouts, their wallet effects and the payout-completed callback, also under concurrency.
import { describe, expect, it } from 'vitest';
import { addDecimal, compareDecimal, subtractDecimal } from '../money/decimal.ts';
import { ALL_PERMISSIONS } from '../domain/model.ts';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import { expectProblem } from '../testing/raw-http.ts';
import { setupServer, START, server, clock, send, keyFor, credsOf, envId, stored, balance, listOf, unique, payout, staking } from './testing/transactions.ts';

setupServer();

describe('POST /transactions/payout', () => {
  it('creates a pending credit and debits the wallet exactly', async () => {
    const t = await server.newTenant();
    clock.set(START);
    const { data, response } = await t.transactions.POST('/transactions/payout', {
      body: { thirdPartyId: 'merchant-payout-2026-000183', userId: 'user_5521', amount: 150.25 },
    });
    expect(response.status).toBe(201);
    expect(data).toEqual({ transactionId: expect.stringMatching(/^txn_[0-9A-Z]{26}$/), thirdPartyId: 'merchant-payout-2026-000183' });
    expect(await balance(t)).toBe('999849.75');

    const list = await listOf(t, 'user_5521');
    expect(list).toEqual([
      {
        id: data!.transactionId,
        userId: 'user_5521',
        tenantId: t.tenantId,
        status: 'pending',
        amount: 150.25,
        type: 'payout',
        side: 'credit',
        createdDate: '2026-11-20T14:02:11.480Z',
        thirdPartyId: 'merchant-payout-2026-000183',
      },
    ]);
    const record = await stored(t.tenantId, data!.transactionId);
    expect(record).toMatchObject({ amount: '150.25', notifyUrl: null, completedAt: null, environmentId: await envId(t.tenantId) });
  });

  it('stores a notifyUrl that follows the destination rules, and refuses one that breaks them (nothing written)', async () => {
    const t = await server.newTenant();
    const ok = await payout(t, { userId: 'u-cb', amount: 5, notifyUrl: 'http://127.0.0.1:9/payouts/completed' });
    expect(ok.response.status).toBe(201);
    expect((await stored(t.tenantId, ok.data!.transactionId))?.notifyUrl).toBe('http://127.0.0.1:9/payouts/completed');

    const before = await balance(t);
    for (const [url, rule] of [
      ['https://10.0.4.17/payouts', 'private-address'],
      ['https://user:pw@127.0.0.1/payouts', 'no-credentials'],
      ['https://169.254.169.254/latest/meta-data', 'link-local-address'],
      ['ftp://127.0.0.1/payouts', null],
    ] as const) {
      const a = await send(credsOf(t), 'POST', '/transactions/payout', { json: { thirdPartyId: unique('po'), userId: 'u-bad', amount: 5, notifyUrl: url } });
      expectProblem(a, 400, 'destination-not-allowed');
      if (rule) expect(a.body.rule).toBe(rule);
    }
    expect(await balance(t)).toBe(before);
    expect(await listOf(t, 'u-bad')).toEqual([]);
  });

  it('answers 409 with existingTransactionId to a repeated thirdPartyId whatever the body, before the wallet check', async () => {
    const t = await server.newTenant();
    const first = await payout(t, { thirdPartyId: 'merchant-payout-2026-000200', userId: 'u-dup', amount: 10 });
    expect(first.response.status).toBe(201);
    const afterFirst = await balance(t);

    for (const body of [
      { thirdPartyId: 'merchant-payout-2026-000200', userId: 'u-dup', amount: 10 },
      { thirdPartyId: 'merchant-payout-2026-000200', userId: 'someone-else', amount: 3.5, notifyUrl: 'https://10.0.0.1/x' },
      // The wallet cannot cover this one: the duplicate still wins.
      { thirdPartyId: 'merchant-payout-2026-000200', userId: 'u-dup', amount: 999999999 },
    ]) {
      const a = await send(credsOf(t), 'POST', '/transactions/payout', { json: body });
      expectProblem(a, 409, 'duplicate-third-party-id');
      expect(a.body.existingTransactionId).toBe(first.data!.transactionId);
    }
    expect(await balance(t)).toBe(afterFirst);
    expect(await listOf(t, 'u-dup')).toHaveLength(1);
    expect(await listOf(t, 'someone-else')).toEqual([]);
  });

  it('scopes thirdPartyId to the operation, the tenant and the environment', async () => {
    const a = await server.newTenant('A');
    const b = await server.newTenant('B');
    const id = 'shared-third-party-id-1';
    expect((await payout(a, { thirdPartyId: id, amount: 1 })).response.status).toBe(201);
    expect((await staking(a, { thirdPartyId: id })).response.status).toBe(201);
    expect((await payout(b, { thirdPartyId: id, amount: 1 })).response.status).toBe(201);
    expect((await staking(b, { thirdPartyId: id })).response.status).toBe(201);

    // The live environment of A: its own wallet (empty at start) and its own ids.
    const live = await keyFor(a, ALL_PERMISSIONS, 'live');
    const empty = await live.transactions.POST('/transactions/payout', { body: { thirdPartyId: id, userId: 'u-live', amount: 1 } });
    expect(empty.response.status).toBe(422);
    expect(empty.error?.type).toBe(`${PROBLEM_TYPE_BASE}insufficient-funds`);
    const liveEnv = await envId(a.tenantId, 'live');
    await server.services.store.transaction((tx) => tx.tenants.adjustWallet(liveEnv, '10'));
    const funded = await live.transactions.POST('/transactions/payout', { body: { thirdPartyId: id, userId: 'u-live', amount: 1 } });
    expect(funded.response.status).toBe(201);
    const again = await live.transactions.POST('/transactions/payout', { body: { thirdPartyId: id, userId: 'u-live', amount: 1 } });
    expect(again.response.status).toBe(409);
    expect(again.error?.existingTransactionId).toBe(funded.data!.transactionId);
    expect((await live.transactions.POST('/transactions/staking/payout', { body: { thirdPartyId: id, userId: 'u-live', usdAmount: 1, asset: 'KRU' } })).response.status).toBe(201);
  });

  it('answers 422 insufficient-funds naming balance and amount, and leaves the wallet unchanged', async () => {
    const t = await server.newTenant();
    expect((await payout(t, { amount: 999999.5 })).response.status).toBe(201);
    const a = await send(credsOf(t), 'POST', '/transactions/payout', { json: { thirdPartyId: unique('po'), userId: 'u-poor', amount: 0.50000001 } });
    expectProblem(a, 422, 'insufficient-funds');
    expect(a.body.detail).toContain('0.5');
    expect(a.body.detail).toContain('0.50000001');
    expect(await balance(t)).toBe('0.5');
    expect(await listOf(t, 'u-poor')).toEqual([]);
    // Exactly the balance is fine, and leaves zero.
    expect((await payout(t, { userId: 'u-poor', amount: 0.5 })).response.status).toBe(201);
    expect(await balance(t)).toBe('0');
  });

  it('keeps money exact: 0.1 + 0.2 is 0.3, and 9999999.99999999 round-trips', async () => {
    const t = await server.newTenant();
    await payout(t, { userId: 'u-exact', amount: 0.1 });
    await payout(t, { userId: 'u-exact', amount: 0.2 });
    expect(await balance(t)).toBe('999999.7');

    await t.sandbox.POST('/sandbox/wallet/fund', { body: { amount: 9999999.99999999 } });
    const big = await payout(t, { userId: 'u-big', amount: 9999999.99999999 });
    expect(big.response.status).toBe(201);
    expect(await balance(t)).toBe('999999.7');
    const res = await fetch(`${server.url}/transactions/users?userId=u-big`, { headers: { 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash } });
    const text = await res.text();
    expect(text).toContain('"amount":9999999.99999999');
    expect((await stored(t.tenantId, big.data!.transactionId))?.amount).toBe('9999999.99999999');
  });
});


describe('payouts under concurrency', () => {
  it('accepts exactly one of 20 parallel payouts with the same thirdPartyId and debits the wallet once', async () => {
    const t = await server.newTenant();
    const thirdPartyId = unique('race');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.transactions.POST('/transactions/payout', { body: { thirdPartyId, userId: 'u-race', amount: 12 + i } })),
    );
    const created = answers.filter((a) => a.response.status === 201);
    const conflicts = answers.filter((a) => a.response.status === 409);
    expect(created).toHaveLength(1);
    expect(conflicts).toHaveLength(19);
    const winner = created[0]!.data!.transactionId;
    for (const c of conflicts) {
      expect(c.error?.type).toBe(`${PROBLEM_TYPE_BASE}duplicate-third-party-id`);
      expect(c.error?.existingTransactionId).toBe(winner);
    }
    const record = await stored(t.tenantId, winner);
    expect(await balance(t)).toBe(subtractDecimal('1000000', record!.amount!));
    expect(await listOf(t, 'u-race')).toHaveLength(1);
  });

  it('never overdraws the wallet under 50 parallel payouts that together exceed it', async () => {
    const t = await server.newTenant();
    // Exact decimals built as text (float sums would not be), then sent as JSON numbers.
    const amounts = Array.from({ length: 50 }, (_, i) => Number(`${25000 + i * 1111}.${String(12345678 + i * 7)}`));
    const answers = await Promise.all(amounts.map((amount) => payout(t, { userId: 'u-many', amount })));
    const accepted: string[] = [];
    const refused: string[] = [];
    for (const [i, a] of answers.entries()) {
      const exact = String(amounts[i]);
      if (a.response.status === 201) accepted.push(exact);
      else {
        expect(a.response.status).toBe(422);
        expect(a.error?.type).toBe(`${PROBLEM_TYPE_BASE}insufficient-funds`);
        refused.push(exact);
      }
    }
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    const final = await balance(t);
    expect(compareDecimal(final, '0')).toBeGreaterThanOrEqual(0);
    const debited = accepted.reduce((sum, x) => addDecimal(sum, x), '0');
    expect(subtractDecimal('1000000', final)).toBe(debited);
    // A payout was refused only when the balance could not cover it, and the balance only fell.
    for (const r of refused) expect(compareDecimal(final, r)).toBe(-1);
    const list = await listOf(t, 'u-many');
    expect(list).toHaveLength(accepted.length);
    expect(list.map((x) => String(x.amount)).sort()).toEqual([...accepted].sort());
  });
});
