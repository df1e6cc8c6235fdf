// Read-only transaction queries, scoped to the tenant environment.
import type { TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { InvalidCursorError } from '../store-errors.ts';
import type { Page } from '../store.ts';

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 500;

/** A page of the user's transactions, newest first; empty for a user the environment does not know. */
export async function listUserTransactions(
  services: Services,
  scope: Scope,
  q: { userId: string; transactionId?: string; limit?: number; cursor?: string },
): Promise<Page<TransactionRecord>> {
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? DEFAULT_LIST_LIMIT), 1), MAX_LIST_LIMIT);
  try {
    return await services.store.read((tx) =>
      tx.transactions.listByUser(scope.environmentId, q.userId, {
        limit,
        cursor: q.cursor ?? null,
        ...(q.transactionId !== undefined ? { transactionId: q.transactionId } : {}),
      }),
    );
  } catch (e) {
    if (e instanceof InvalidCursorError) {
      throw new AppError('validation-failed', 'The query is invalid: /query/cursor is not a cursor issued by GET /transactions/users for this user.', {
        errors: [{ pointer: '/query/cursor', detail: 'is not a valid cursor' }],
      });
    }
    throw e;
  }
}

/**
 * What GET /transactions/users answers depends on: a token that moves with every committed
 * change to the environment's transactions, or null when the store cannot tell cheaply. Take
 * it before the read whose answer it labels.
 */
export function userTransactionsVersion(services: Services, scope: Scope): string | null {
  return services.store.transactionsVersion(scope.environmentId);
}

/** One transaction by order number and/or hash (both must match when both are given); the most recent wins. */
export async function searchTransaction(services: Services, scope: Scope, q: { orderNumber?: string; txHash?: string }): Promise<TransactionRecord> {
  const orderNumber = q.orderNumber === '' ? undefined : q.orderNumber;
  const txHash = q.txHash === '' ? undefined : q.txHash;
  if (orderNumber === undefined && txHash === undefined) {
    throw new AppError('search-parameter-required', 'Either orderNumber or txHash is required');
  }
  const found = await services.store.read((tx) =>
    tx.transactions.search(scope.environmentId, { ...(orderNumber !== undefined ? { orderNumber } : {}), ...(txHash !== undefined ? { txHash } : {}) }),
  );
  if (!found) {
    const by = [orderNumber !== undefined ? `orderNumber ${orderNumber}` : null, txHash !== undefined ? `txHash ${txHash}` : null].filter(Boolean).join(' and ');
    throw new AppError('not-found', `No transaction with ${by} exists in this tenant environment.`);
  }
  return found;
}
