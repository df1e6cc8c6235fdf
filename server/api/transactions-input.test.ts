// The Transactions API end to end: hostile input is refused with a problem and changes nothing.
import { describe, expect, it } from 'vitest';
import { createServiceAccount } from '../domain/admin.ts';
import { expectProblem } from '../testing/raw-http.ts';
import { setupServer, server, send, credsOf, balance, listOf, payout, staking, unlinkedPayment } from './testing/transactions.ts';

setupServer();

describe('hostile input', () => {
  const valid = { thirdPartyId: 'hostile-1', userId: 'u-hostile', amount: 10 };
  const bad: Array<[string, unknown]> = [
    ['amount as a string', { ...valid, amount: '10' }],
    ['negative amount', { ...valid, amount: -10 }],
    ['zero amount', { ...valid, amount: 0 }],
    ['0.1 + 0.2 in binary', { ...valid, amount: 0.1 + 0.2 }],
    ['1e-9', { ...valid, amount: 1e-9 }],
    ['nine decimals', { ...valid, amount: 1.123456789 }],
    ['16 significant digits', { ...valid, amount: 1234567.123456789 }],
    ['above the maximum', { ...valid, amount: 1e13 }],
    ['NaN-like string', { ...valid, amount: 'NaN' }],
    ['Infinity-like string', { ...valid, amount: 'Infinity' }],
    ['null amount', { ...valid, amount: null }],
    ['boolean amount', { ...valid, amount: true }],
    ['array amount', { ...valid, amount: [10] }],
    ['object amount', { ...valid, amount: { value: 10 } }],
    ['missing amount', { thirdPartyId: 'hostile-1', userId: 'u-hostile' }],
    ['missing thirdPartyId', { userId: 'u-hostile', amount: 10 }],
    ['empty thirdPartyId', { ...valid, thirdPartyId: '' }],
    ['thirdPartyId over 128 characters', { ...valid, thirdPartyId: 'x'.repeat(129) }],
    ['thirdPartyId with a space', { ...valid, thirdPartyId: 'a b' }],
    ['numeric thirdPartyId', { ...valid, thirdPartyId: 12345 }],
    ['unicode userId', { ...valid, userId: 'usér_5521' }],
    ['emoji userId', { ...valid, userId: 'user_💸' }],
    ['userId with a control character', { ...valid, userId: 'user\u0000' }],
    ['userId over 128 characters', { ...valid, userId: 'u'.repeat(129) }],
    ['huge userId', { ...valid, userId: 'u'.repeat(60_000) }],
    ['unknown field', { ...valid, currency: 'USD' }],
    ['constructor key', { ...valid, constructor: { prototype: { polluted: true } } }],
    ['notifyUrl not a URL', { ...valid, notifyUrl: 'not a url' }],
    ['notifyUrl over 2048 characters', { ...valid, notifyUrl: `https://hooks.merchant.example/${'a'.repeat(2100)}` }],
    ['an array body', [valid]],
    ['a string body', 'payout'],
    ['a number body', 42],
    ['a null body', null],
  ];

  it.each(bad)('refuses %s with 400 validation-failed and writes nothing', async (_name, body) => {
    const t = await server.newTenant();
    const a = await send(credsOf(t), 'POST', '/transactions/payout', { json: body });
    expectProblem(a, 400, 'validation-failed');
    expect(a.body.errors?.length).toBeGreaterThan(0);
    expect(await balance(t)).toBe('1000000');
    expect(await listOf(t, 'u-hostile')).toEqual([]);
  });

  it('refuses __proto__ keys without polluting anything', async () => {
    const t = await server.newTenant();
    const text = '{"thirdPartyId":"hostile-proto","userId":"u-hostile","amount":10,"__proto__":{"isAdmin":true,"amount":1}}';
    const a = await send(credsOf(t), 'POST', '/transactions/payout', { text });
    expectProblem(a, 400, 'validation-failed');
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(await balance(t)).toBe('1000000');
    expect(await listOf(t, 'u-hostile')).toEqual([]);
  });

  it('answers malformed JSON with 400 malformed-json, text/plain with 415, a 70 KiB body with 413, and no body with 400', async () => {
    const t = await server.newTenant();
    expectProblem(await send(credsOf(t), 'POST', '/transactions/payout', { text: '{"thirdPartyId": "x", "amount": ' }), 400, 'malformed-json');
    expectProblem(await send(credsOf(t), 'POST', '/transactions/payout', { text: "{'thirdPartyId': 'x'}" }), 400, 'malformed-json');
    expectProblem(
      await send(credsOf(t), 'POST', '/transactions/payout', { text: JSON.stringify(valid), contentType: 'text/plain' }),
      415,
      'unsupported-media-type',
    );
    expectProblem(
      await send(credsOf(t), 'POST', '/transactions/payout', { json: { ...valid, userId: 'u'.repeat(70 * 1024) } }),
      413,
      'payload-too-large',
    );
    expectProblem(await send(credsOf(t), 'POST', '/transactions/payout', { headers: { 'content-type': 'application/json' } }), 400, 'validation-failed');
    expect(await balance(t)).toBe('1000000');
    expect(await listOf(t, 'u-hostile')).toEqual([]);
  });

  it('refuses hostile staking, revoke and refund bodies and changes nothing', async () => {
    const t = await server.newTenant();
    const st = await staking(t, { userId: 'u-hostile' });
    const pay = await unlinkedPayment(t, 'u-hostile');
    await createServiceAccount(server.services, { tenantId: t.tenantId, email: 'ops@merchant.example' });
    const stake = { thirdPartyId: 'hostile-st', userId: 'u-hostile', usdAmount: 10, asset: 'KRU' };
    const cases: Array<[string, unknown]> = [
      ['/transactions/staking/payout', { ...stake, asset: 'BTC' }],
      ['/transactions/staking/payout', { ...stake, asset: 'kru' }],
      ['/transactions/staking/payout', { ...stake, usdAmount: 10.005 }],
      ['/transactions/staking/payout', { ...stake, usdAmount: -1 }],
      ['/transactions/staking/payout', { ...stake, durationInMonths: 0 }],
      ['/transactions/staking/payout', { ...stake, durationInMonths: 61 }],
      ['/transactions/staking/payout', { ...stake, durationInMonths: 2.5 }],
      ['/transactions/staking/payout', { ...stake, durationInMonths: '3' }],
      ['/transactions/staking/payout', { ...stake, extra: true }],
      ['/transactions/staking/payout/revoke', { transactionId: `${st.data!.transactionId}'; DROP TABLE transactions;--` }],
      ['/transactions/staking/payout/revoke', { transactionId: '' }],
      ['/transactions/staking/payout/revoke', { transactionId: 'x'.repeat(65) }],
      ['/transactions/staking/payout/revoke', { transactionId: st.data!.transactionId, force: true }],
      ['/transactions/staking/payout/revoke', [st.data!.transactionId]],
      ['/transactions/refund', { txId: pay.id, email: 'not-an-email' }],
      ['/transactions/refund', { txId: pay.id, email: `${'a'.repeat(250)}@x.example` }],
      ['/transactions/refund', { txId: pay.id }],
      ['/transactions/refund', { txId: pay.id, email: 'ops@merchant.example', amount: 1 }],
    ];
    for (const [path, body] of cases) expectProblem(await send(credsOf(t), 'POST', path, { json: body }), 400, 'validation-failed');
    const list = await listOf(t, 'u-hostile');
    expect(list.map((x) => [x.id, x.status]).sort()).toEqual(
      [
        [st.data!.transactionId, 'active'],
        [pay.id, 'pending_confirmation'],
      ].sort(),
    );
  });

  it('refuses invalid query parameters with 400', async () => {
    const t = await server.newTenant();
    const c = credsOf(t);
    for (const q of ['', 'userId=', `userId=${'u'.repeat(129)}`, 'userId=us%C3%A9r', 'userId=u1&limit=0', 'userId=u1&limit=501', 'userId=u1&limit=abc', 'userId=u1&transactionId=a%20b']) {
      expectProblem(await send(c, 'GET', `/transactions/users?${q}`), 400, 'validation-failed');
    }
    for (const q of ['orderNumber=ord-1', 'txHash=0x%20ab', `txHash=${'a'.repeat(129)}`]) {
      expectProblem(await send(c, 'GET', `/transactions?${q}`), 400, 'validation-failed');
    }
  });
});
