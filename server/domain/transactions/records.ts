// Building transaction records and the errors every transaction operation shares.
import type { TransactionRecord, TransactionType } from '../model.ts';
import type { Scope } from '../context.ts';
import { AppError } from '../errors.ts';
import { newTransactionId } from '../ids.ts';

type Core = Pick<TransactionRecord, 'type' | 'side' | 'status' | 'amount'>;
type Optional = Partial<Omit<TransactionRecord, 'id' | 'environmentId' | 'tenantId' | 'createdAt' | keyof Core>>;

/** A new transaction of the scope's tenant environment; fields that do not apply are null. */
export function newTransaction(scope: Scope, now: number, fields: Core & Optional): TransactionRecord {
  return {
    id: newTransactionId(now),
    environmentId: scope.environmentId,
    tenantId: scope.tenantId,
    userId: null,
    amountBaseUnits: null,
    thirdPartyId: null,
    notifyUrl: null,
    asset: null,
    durationInMonths: null,
    orderId: null,
    orderNumber: null,
    txHash: null,
    verified: null,
    refundEmail: null,
    createdAt: now,
    completedAt: null,
    ...fields,
  };
}

const KIND: Record<TransactionType, string> = {
  payout: 'a payout',
  staking: 'a staking payout',
  payment: 'a payment',
  refund: 'a refund',
};

/** "a payout", "a staking payout", ... for problem details. */
export const describeType = (type: TransactionType): string => KIND[type];

/** Unknown ids and ids of other tenant environments answer alike. */
export const transactionNotFound = (id: string): AppError =>
  new AppError('not-found', `No transaction ${id} exists in this tenant environment.`);

/** Sandbox operations act only on test environments (the router refuses live keys first). */
export function requireTestEnvironment(scope: Scope): void {
  if (scope.environment !== 'test') {
    throw new AppError('live-key-not-allowed', 'Sandbox operations accept only credentials of the test environment.');
  }
}
