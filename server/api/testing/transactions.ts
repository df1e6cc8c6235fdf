// Shared by the Transactions API tests (server/api/transactions-*.test.ts): one real server on
// loopback HTTP per test file (setupServer), a manual clock, and the request helpers.
import { afterAll, beforeAll } from 'vitest';
import { ManualClock } from '../../domain/clock.ts';
import type { EnvironmentName, Permission, TransactionRecord } from '../../domain/model.ts';
import { ALL_PERMISSIONS } from '../../domain/model.ts';
import { startTestServer, type TestServer, type TestTenant } from '../../testing/harness.ts';
import { sendRaw, type RawAnswer, type RawCreds } from '../../testing/raw-http.ts';

export const START = Date.UTC(2026, 10, 20, 14, 2, 11, 480);

// The generated request type marks durationInMonths required because the schema gives it a
// default (openapi-typescript's defaultNonNullable); the contract makes it optional, and
// these tests must be able to leave it out.

export let server: TestServer;
export const clock = new ManualClock(START);

/** Starts the server before the file's tests and closes it after them. */
export function setupServer(): void {
  beforeAll(async () => {
    server = await startTestServer({ clock, env: { RATE_LIMIT_RPS: '0' } });
  });
  afterAll(async () => {
    await server?.close();
  });
}


export type Creds = RawCreds;

export const send = (...args: Parameters<typeof sendRaw> extends [string, ...infer R] ? R : never): Promise<RawAnswer> => sendRaw(server.url, ...args);

export async function keyFor(t: TestTenant, permissions: readonly Permission[], environment: EnvironmentName = 'test') {
  const key = await server.keyWith(t, permissions, environment);
  return { ...key, creds: { apiKey: key.apiKey, apiHash: key.apiHash, tenantId: t.tenantId } };
}

export const allBut = (p: Permission): Permission[] => ALL_PERMISSIONS.filter((x) => x !== p);
export const credsOf = (t: TestTenant): Creds => ({ apiKey: t.apiKey, apiHash: t.apiHash, tenantId: t.tenantId });

export const envId = (tenantId: string, env: EnvironmentName = 'test'): Promise<string> => server.environmentId(tenantId, env);

export async function stored(tenantId: string, id: string, env: EnvironmentName = 'test'): Promise<TransactionRecord | null> {
  const environmentId = await envId(tenantId, env);
  return server.services.store.transaction((tx) => tx.transactions.get(environmentId, id));
}

export async function balance(t: TestTenant): Promise<string> {
  const { data } = await t.sandbox.GET('/sandbox/wallet');
  if (!data) throw new Error('wallet unreadable');
  return data.balance;
}

export async function listOf(t: { transactions: TestTenant['transactions'] }, userId: string) {
  const { data, error } = await t.transactions.GET('/transactions/users', { params: { query: { userId } } });
  if (!data) throw new Error(`list failed: ${JSON.stringify(error)}`);
  return data;
}

export let seq = 0;
export const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${++seq}`;

export async function payout(t: TestTenant, body: { thirdPartyId?: string; userId?: string; amount: number; notifyUrl?: string }) {
  return t.transactions.POST('/transactions/payout', {
    body: { thirdPartyId: body.thirdPartyId ?? unique('po'), userId: body.userId ?? unique('user'), amount: body.amount, ...(body.notifyUrl ? { notifyUrl: body.notifyUrl } : {}) },
  });
}

export async function staking(t: TestTenant, body: { thirdPartyId?: string; userId?: string; usdAmount?: number; durationInMonths?: number }) {
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

export async function unlinkedPayment(t: TestTenant, userId: string, amount = 75.5, txHash = `0x${unique('h').replace(/[^A-Za-z0-9]/g, '')}`) {
  const { data, error } = await t.sandbox.POST('/sandbox/payments', { body: { userId, amount, txHash } });
  if (!data) throw new Error(`payment failed: ${JSON.stringify(error)}`);
  return data;
}

/** Every operation of the document, as a raw request with a valid body. */
export function operations(ids: { stakingId: string; paymentId: string }) {
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
