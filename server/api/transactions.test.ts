// The Transactions API end to end: the real server over loopback HTTP, the typed client, a
// real database file. The harness checks every response against the spec, so a shape bug
// fails here as a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createServiceAccount } from '../domain/admin.ts';
import { ManualClock } from '../domain/clock.ts';
import { addDecimal, compareDecimal, subtractDecimal } from '../money/decimal.ts';
import type { EnvironmentName, Permission, TransactionRecord } from '../domain/model.ts';
import { ALL_PERMISSIONS } from '../domain/model.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import { expectProblem, sendRaw, type RawAnswer, type RawCreds } from '../testing/raw-http.ts';

const START = Date.UTC(2026, 10, 20, 14, 2, 11, 480);

// The generated request type marks durationInMonths required because the schema gives it a
// default (openapi-typescript's defaultNonNullable); the contract makes it optional, and
// these tests must be able to leave it out.

let server: TestServer;
const clock = new ManualClock(START);

beforeAll(async () => {
  server = await startTestServer({ clock, env: { RATE_LIMIT_RPS: '0' } });
});
afterAll(async () => {
  await server?.close();
});

// ---- helpers ---------------------------------------------------------------------------

type Creds = RawCreds;

const send = (...args: Parameters<typeof sendRaw> extends [string, ...infer R] ? R : never): Promise<RawAnswer> => sendRaw(server.url, ...args);

async function keyFor(t: TestTenant, permissions: readonly Permission[], environment: EnvironmentName = 'test') {
  const key = await createApiKey(server.services, { tenantId: t.tenantId, environment, permissions });
  return { creds: { apiKey: key.apiKey, apiHash: key.apiHash, tenantId: t.tenantId }, ...server.clientsFor({ apiKey: key.apiKey, apiHash: key.apiHash, tenantId: t.tenantId }) };
}

const allBut = (p: Permission): Permission[] => ALL_PERMISSIONS.filter((x) => x !== p);
const credsOf = (t: TestTenant): Creds => ({ apiKey: t.apiKey, apiHash: t.apiHash, tenantId: t.tenantId });

async function envId(tenantId: string, env: EnvironmentName = 'test'): Promise<string> {
  const e = await server.services.store.transaction((tx) => tx.tenants.findEnvironment(tenantId, env));
  if (!e) throw new Error('no environment');
  return e.id;
}

async function stored(tenantId: string, id: string, env: EnvironmentName = 'test'): Promise<TransactionRecord | null> {
  const environmentId = await envId(tenantId, env);
  return server.services.store.transaction((tx) => tx.transactions.get(environmentId, id));
}

async function balance(t: TestTenant): Promise<string> {
  const { data } = await t.sandbox.GET('/sandbox/wallet');
  if (!data) throw new Error('wallet unreadable');
  return data.balance;
}

async function listOf(t: { transactions: TestTenant['transactions'] }, userId: string) {
  const { data, error } = await t.transactions.GET('/transactions/users', { params: { query: { userId } } });
  if (!data) throw new Error(`list failed: ${JSON.stringify(error)}`);
  return data;
}

let seq = 0;
const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${++seq}`;

async function payout(t: TestTenant, body: { thirdPartyId?: string; userId?: string; amount: number; notifyUrl?: string }) {
  return t.transactions.POST('/transactions/payout', {
    body: { thirdPartyId: body.thirdPartyId ?? unique('po'), userId: body.userId ?? unique('user'), amount: body.amount, ...(body.notifyUrl ? { notifyUrl: body.notifyUrl } : {}) },
  });
}

async function staking(t: TestTenant, body: { thirdPartyId?: string; userId?: string; usdAmount?: number; durationInMonths?: number }) {
  return t.transactions.POST('/transactions/staking/payout', {
    body: {
      thirdPartyId: body.thirdPartyId ?? unique('st'),
      userId: body.userId ?? unique('user'),
      usdAmount: body.usdAmount ?? 250.5,
      asset: 'KRU',
      ...(body.durationInMonths !== undefined ? { durationInMonths: body.durationInMonths } : {}),
    },
  });
}

async function unlinkedPayment(t: TestTenant, userId: string, amount = 75.5, txHash = `0x${unique('h').replace(/[^A-Za-z0-9]/g, '')}`) {
  const { data, error } = await t.sandbox.POST('/sandbox/payments', { body: { userId, amount, txHash } });
  if (!data) throw new Error(`payment failed: ${JSON.stringify(error)}`);
  return data;
}

/** Every operation of the document, as a raw request with a valid body. */
function operations(ids: { stakingId: string; paymentId: string }) {
  return [
    { op: 'createPayout', permission: 'payouts', method: 'POST', path: '/transactions/payout', json: { thirdPartyId: unique('po'), userId: 'user_1', amount: 1 } },
    { op: 'createStakingPayout', permission: 'staking', method: 'POST', path: '/transactions/staking/payout', json: { thirdPartyId: unique('st'), userId: 'user_1', usdAmount: 1, asset: 'KRU' } },
    { op: 'revokeStakingPayout', permission: 'staking', method: 'POST', path: '/transactions/staking/payout/revoke', json: { transactionId: ids.stakingId } },
    { op: 'listUserTransactions', permission: 'transactions_read', method: 'GET', path: '/transactions/users?userId=user_1' },
    { op: 'searchTransaction', permission: 'transactions_read', method: 'GET', path: '/transactions?txHash=0xabc' },
    { op: 'refundPayment', permission: 'refunds', method: 'POST', path: '/transactions/refund', json: { txId: ids.paymentId, email: 'ops@merchant.example' } },
  ] as const;
}

// ---- authentication, permissions, tenancy ------------------------------------------------

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

// ---- payouts --------------------------------------------------------------------------------

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

// ---- concurrency ------------------------------------------------------------------------

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
    expect(await balance(t)).toBe(subtractDecimal('1000000', record!.amount));
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

// ---- hostile input -------------------------------------------------------------------------

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

// ---- staking ------------------------------------------------------------------------------

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

// ---- queries ------------------------------------------------------------------------------

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

    const one = await t.transactions.GET('/transactions/users', { params: { query: { userId: 'u-list', transactionId: ids[1]! } } });
    expect(one.data?.map((x) => x.id)).toEqual([ids[1]]);

    // Another user's transaction, or an unknown id, narrows to nothing.
    const foreign = await t.transactions.GET('/transactions/users', { params: { query: { userId: 'u-other', transactionId: ids[1]! } } });
    expect(foreign.data).toEqual([]);
    expect(await listOf(t, 'nobody-at-all')).toEqual([]);
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
  async function orderPayment(t: TestTenant, fields: { orderNumber: string; txHash: string; at: number; amount: string }): Promise<string> {
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
        amountBaseUnits: fields.amount,
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

    const older = await orderPayment(t, { orderNumber: 'ORD-000042', txHash: '0xaaa1', at: START + 1000, amount: '50000000' });
    const newer = await orderPayment(t, { orderNumber: 'ORD-000042', txHash: '0xaaa2', at: START + 2000, amount: '49990000' });
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
      amount: 49990000,
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

// ---- refunds ------------------------------------------------------------------------------

describe('POST /transactions/refund', () => {
  it('refunds a pending_confirmation payment to a service account (e-mail case-insensitive)', async () => {
    const t = await server.newTenant();
    await createServiceAccount(server.services, { tenantId: t.tenantId, email: 'maria.santos@mail.example' });
    clock.set(START);
    const pay = await unlinkedPayment(t, 'user_5521', 75.5);
    clock.set(START + 90_000);
    const { data, response } = await t.transactions.POST('/transactions/refund', { body: { txId: pay.id, email: 'Maria.Santos@Mail.Example' } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ status: 'refunded', message: `Payment ${pay.id} of 75.5 was refunded to the service account maria.santos@mail.example.` });
    expect(await stored(t.tenantId, pay.id)).toMatchObject({ status: 'refunded', refundEmail: 'maria.santos@mail.example', completedAt: START + 90_000 });
    const [item] = await listOf(t, 'user_5521');
    expect(item).toMatchObject({ status: 'refunded', completedDate: '2026-11-20T14:03:41.480Z' });

    const twice = await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: pay.id, email: 'maria.santos@mail.example' } });
    expectProblem(twice, 409, 'not-refundable');
    expect(twice.body.detail).toContain('refunded');
  });

  it('answers 404 unknown, 409 not a payment, 422 unknown account, and changes nothing', async () => {
    const t = await server.newTenant();
    const other = await server.newTenant();
    await createServiceAccount(server.services, { tenantId: t.tenantId, email: 'ops@merchant.example' });
    await createServiceAccount(server.services, { tenantId: other.tenantId, email: 'their-ops@merchant.example' });
    const pay = await unlinkedPayment(t, 'u-ref');
    const po = await payout(t, { userId: 'u-ref', amount: 1 });

    expectProblem(await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: 'txn_01JD5A2K8N4P7R1T6V9X3Z0BCF', email: 'ops@merchant.example' } }), 404, 'not-found');
    const notPayment = await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: po.data!.transactionId, email: 'ops@merchant.example' } });
    expectProblem(notPayment, 409, 'not-refundable');
    expect(notPayment.body.detail).toContain('a payout');
    const unknown = await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: pay.id, email: 'nobody@merchant.example' } });
    expectProblem(unknown, 422, 'unknown-refund-account');
    // A service account of another tenant is not one of ours.
    expectProblem(await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: pay.id, email: 'their-ops@merchant.example' } }), 422, 'unknown-refund-account');
    expect(await stored(t.tenantId, pay.id)).toMatchObject({ status: 'pending_confirmation', refundEmail: null, completedAt: null });
    expect((await stored(t.tenantId, po.data!.transactionId))?.status).toBe('pending');
  });
});

// ---- isolation ----------------------------------------------------------------------------

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
