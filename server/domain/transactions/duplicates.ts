// thirdPartyId is unique per tenant environment and operation. The check inside the
// transaction answers the common case; the store's unique index settles a race between two
// requests (on PostgreSQL the losing transaction aborts, so the winner is read afresh).
import type { ReadTx, Tx } from '../store.ts';
import type { TransactionRecord, TransactionType } from '../model.ts';
import { UniqueViolation } from '../store.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { describeType } from './records.ts';

function duplicate(type: TransactionType, thirdPartyId: string, existingId: string): AppError {
  const kind = describeType(type).replace(/^a /, '');
  return new AppError(
    'duplicate-third-party-id',
    `A ${kind} with thirdPartyId ${thirdPartyId} already exists in this tenant environment.`,
    { existingTransactionId: existingId },
  );
}

/** Throws 409 duplicate-third-party-id when the thirdPartyId was already used for this type. */
export async function refuseDuplicate(tx: ReadTx, scope: Scope, type: TransactionType, thirdPartyId: string): Promise<void> {
  const existing = await tx.transactions.findByThirdPartyId(scope.environmentId, type, thirdPartyId);
  if (existing) throw duplicate(type, thirdPartyId, existing.id);
}

/**
 * Runs `create` in one store transaction; a unique violation on thirdPartyId (a concurrent
 * request won) becomes the same 409 as the in-transaction check, naming the winner.
 */
export async function createUnique(
  services: Services,
  scope: Scope,
  key: { type: TransactionType; thirdPartyId: string },
  create: (tx: Tx) => Promise<TransactionRecord>,
): Promise<TransactionRecord> {
  return insertUnique(services, scope, key, () => services.store.transaction(create));
}

/** Runs the store call `write`; a unique violation on thirdPartyId becomes the 409 naming the winner. */
export async function insertUnique<T>(services: Services, scope: Scope, key: { type: TransactionType; thirdPartyId: string }, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof UniqueViolation) || err.constraint !== 'third_party_id') throw err;
    const winner = await services.store.read((tx) => tx.transactions.findByThirdPartyId(scope.environmentId, key.type, key.thirdPartyId));
    if (!winner) throw err;
    throw duplicate(key.type, key.thirdPartyId, winner.id);
  }
}
