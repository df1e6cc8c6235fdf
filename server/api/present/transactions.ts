// Transaction records in the contract's shapes: exact decimal strings become JSON numbers
// (exact: stored amounts have at most 15 significant digits), times become ISO 8601 UTC, and
// fields that do not apply are left out (the contract says absent, never null).
import type { components } from '../../../generated/types/transactions.ts';
import { decimalToNumber } from '../../money/decimal.ts';
import type { TransactionRecord } from '../../domain/model.ts';
import { isoTime } from '../../domain/iso-time.ts';

type Schemas = components['schemas'];
export type TransactionBody = Schemas['Transaction'];
export type UserTransactionBody = Schemas['UserTransaction'];
export type TransactionReferenceBody = Schemas['TransactionReference'];

/** Only the entries whose value is not null. */
function present<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: NonNullable<T[K]> } {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== undefined)) as { [K in keyof T]?: NonNullable<T[K]> };
}

/** `Transaction`: the searched record, also answered by the sandbox. */
export function presentTransaction(t: TransactionRecord): TransactionBody {
  return {
    id: t.id,
    ...present({ userId: t.userId }),
    tenantId: t.tenantId,
    status: t.status,
    side: t.side,
    type: t.type,
    ...present({ orderId: t.orderId, orderNumber: t.orderNumber }),
    // Absent only on a payment of an order whose base units do not fit an Amount exactly.
    ...(t.amount !== null ? { amount: decimalToNumber(t.amount) } : {}),
    ...present({ amountBaseUnits: t.amountBaseUnits, txHash: t.txHash, thirdPartyId: t.thirdPartyId }),
    ...staking(t),
    createdDate: isoTime(t.createdAt),
    ...(t.completedAt !== null ? { completedDate: isoTime(t.completedAt) } : {}),
  };
}

/**
 * `UserTransaction`: an item of GET /transactions/users (always a transaction of a user). Built
 * field by field in the contract's order, without intermediate objects: a page presents up to
 * 500 of these per request.
 */
export function presentUserTransaction(t: TransactionRecord): UserTransactionBody {
  if (t.userId === null || t.amount === null) throw new Error(`transaction ${t.id} has no user or no amount and cannot be listed as a user transaction`);
  const out: UserTransactionBody = {
    id: t.id,
    userId: t.userId,
    tenantId: t.tenantId,
    status: t.status,
    amount: decimalToNumber(t.amount),
    type: t.type,
    side: t.side,
    createdDate: isoTime(t.createdAt),
  };
  if (t.completedAt !== null) out.completedDate = isoTime(t.completedAt);
  if (t.thirdPartyId !== null) out.thirdPartyId = t.thirdPartyId;
  if (t.txHash !== null) out.txHash = t.txHash;
  if (t.orderId !== null) out.orderId = t.orderId;
  if (t.orderNumber !== null) out.orderNumber = t.orderNumber;
  if (isStaking(t)) {
    out.asset = 'KRU';
    out.durationInMonths = t.durationInMonths;
  }
  return out;
}

/** asset and durationInMonths of a staking payout (absent on every other type). */
function staking(t: TransactionRecord): { asset?: 'KRU'; durationInMonths?: number } {
  return isStaking(t) ? { asset: 'KRU', durationInMonths: t.durationInMonths } : {};
}

function isStaking(t: TransactionRecord): t is TransactionRecord & { asset: 'KRU'; durationInMonths: number } {
  return t.type === 'staking' && t.asset === 'KRU' && t.durationInMonths !== null;
}

/** `TransactionReference`: answer of payout, staking payout and revoke. */
export function presentReference(t: TransactionRecord): TransactionReferenceBody {
  if (t.thirdPartyId === null) throw new Error(`transaction ${t.id} has no thirdPartyId to reference`);
  return { transactionId: t.id, thirdPartyId: t.thirdPartyId };
}
