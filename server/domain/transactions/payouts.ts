// Payouts: a locked/pending credit to a user, paid from the tenant environment's
// distribution wallet at creation.
import type { TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { checkDestination } from '../destination-check.ts';
import { AppError } from '../errors.ts';
import { negateDecimal } from '../../money/decimal.ts';
import { createUnique, refuseDuplicate } from './duplicates.ts';
import { newTransaction } from './records.ts';

export interface PayoutInput {
  thirdPartyId: string;
  userId: string;
  /** Exact decimal string (see amounts.ts). */
  amount: string;
  notifyUrl?: string;
}

/**
 * Creates a `pending` payout and debits the wallet, all or nothing. Order of the checks, as
 * the contract fixes it: a repeated thirdPartyId is a 409 whatever the rest of the body (a
 * client that lost the first answer retries safely), then the notifyUrl's destination rules,
 * then the wallet (422 insufficient-funds).
 */
export async function createPayout(services: Services, scope: Scope, input: PayoutInput): Promise<TransactionRecord> {
  return createUnique(services, scope, { type: 'payout', thirdPartyId: input.thirdPartyId }, async (tx) => {
    await refuseDuplicate(tx, scope, 'payout', input.thirdPartyId);
    const notifyUrl = input.notifyUrl === undefined ? null : checkDestination(services, input.notifyUrl, 'notifyUrl');

    const balance = await tx.tenants.adjustWallet(scope.environmentId, negateDecimal(input.amount));
    if (balance === null) {
      const env = await tx.tenants.getEnvironment(scope.environmentId);
      if (!env) throw new Error(`environment ${scope.environmentId} vanished`);
      throw new AppError('insufficient-funds', `The distribution wallet holds ${env.walletBalance} and cannot cover ${input.amount}.`);
    }

    const payout = newTransaction(scope, services.clock.now(), {
      type: 'payout',
      side: 'credit',
      status: 'pending',
      amount: input.amount,
      userId: input.userId,
      thirdPartyId: input.thirdPartyId,
      notifyUrl,
    });
    await tx.transactions.insert(payout);
    return payout;
  });
}
