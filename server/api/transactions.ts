// Handlers of spec/transactions.openapi.yaml: payouts, staking payouts and their revocation,
// transaction queries and refunds. Thin: unpack, call the domain, present.
import type { operations } from '../../generated/types/transactions.ts';
import { AMOUNT_RULE, USD_AMOUNT_RULE } from '../../generated/vocabulary.ts';
import { exactAmount } from '../domain/transactions/amounts.ts';
import { createPayout } from '../domain/transactions/payouts.ts';
import { listUserTransactions, searchTransaction, userTransactionsVersion } from '../domain/transactions/queries.ts';
import { refundPayment } from '../domain/transactions/refunds.ts';
import { createStakingPayout, revokeStakingPayout } from '../domain/transactions/staking.ts';
import type { HandlersFor } from '../http/handler-types.ts';
import type { PageKeys } from '../http/page-cache.ts';
import { RenderedJson } from '../http/rendered.ts';
import { presentReference, presentTransaction, presentUserTransaction, type UserTransactionBody } from './present/transactions.ts';

export const transactionsHandlers: HandlersFor<operations> = {
  async createPayout({ body }, { services, scope }) {
    const payout = await createPayout(services, scope, {
      thirdPartyId: body.thirdPartyId,
      userId: body.userId,
      amount: exactAmount(body.amount, AMOUNT_RULE, '/body/amount'),
      ...(body.notifyUrl !== undefined ? { notifyUrl: body.notifyUrl } : {}),
    });
    return { status: 201, body: presentReference(payout) };
  },

  async createStakingPayout({ body }, { services, scope }) {
    const staking = await createStakingPayout(services, scope, {
      thirdPartyId: body.thirdPartyId,
      userId: body.userId,
      usdAmount: exactAmount(body.usdAmount, USD_AMOUNT_RULE, '/body/usdAmount'),
      asset: body.asset,
      ...(body.durationInMonths !== undefined ? { durationInMonths: body.durationInMonths } : {}),
    });
    return { status: 201, body: presentReference(staking) };
  },

  async revokeStakingPayout({ body }, { services, scope }) {
    const staking = await revokeStakingPayout(services, scope, body.transactionId);
    return { status: 200, body: presentReference(staking) };
  },

  async listUserTransactions({ query }, { services, scope }) {
    const page = await listUserTransactions(services, scope, {
      userId: query.userId,
      ...(query.transactionId !== undefined ? { transactionId: query.transactionId } : {}),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
    });
    // The body stays the interface's array; the next page's cursor travels in a header.
    const body: UserTransactionBody[] = page.items.map(presentUserTransaction);
    return { status: 200, body: new RenderedJson<UserTransactionBody[]>(JSON.stringify(body)), ...(page.nextCursor !== null ? { headers: { 'Next-Cursor': page.nextCursor } } : {}) };
  },

  async searchTransaction({ query }, { services, scope }) {
    const found = await searchTransaction(services, scope, {
      ...(query.orderNumber !== undefined ? { orderNumber: query.orderNumber } : {}),
      ...(query.txHash !== undefined ? { txHash: query.txHash } : {}),
    });
    return { status: 200, body: presentTransaction(found) };
  },

  async refundPayment({ body }, { services, scope }) {
    const result = await refundPayment(services, scope, { txId: body.txId, email: body.email });
    return { status: 200, body: { status: result.status, message: result.message } };
  },
};

/**
 * Where a page of GET /transactions/users is kept (per environment) and the version it is
 * answered at: anything committed to the environment's transactions moves it.
 */
export const userTransactionsPages: PageKeys<Parameters<(typeof transactionsHandlers)['listUserTransactions']>[0]> = {
  key: ({ query }, { scope }) => JSON.stringify([scope.environmentId, query.userId, query.transactionId, query.limit, query.cursor]),
  version: ({ services, scope }) => userTransactionsVersion(services, scope),
};
