// Payouts: a locked/pending credit to a user, paid from the tenant environment's
// distribution wallet at creation.
import type { TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { checkDestination } from '../destination-check.ts';
import { AppError } from '../errors.ts';
import { negateDecimal } from '../../money/decimal.ts';
import { insertUnique, refuseDuplicate } from './duplicates.ts';
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
 *
 * The accepted case is one store call, Store.createPayout: the insert and then the debit (one
 * statement on PostgreSQL; on SQLite one insert and one debit for a whole batch of payouts). A
 * repeated thirdPartyId is caught by the insert's unique index, before the wallet is looked
 * at, and insertUnique answers 409; a refused notifyUrl looks for a duplicate before it is
 * answered, so the order of the checks holds. The debit comes last because it locks the
 * environment's wallet row until the commit (PostgreSQL): every payout of the environment
 * waits for that lock, so it is held from that statement to the commit rather than for the
 * whole transaction.
 */
export async function createPayout(services: Services, scope: Scope, input: PayoutInput): Promise<TransactionRecord> {
  let notifyUrl: string | null = null;
  if (input.notifyUrl !== undefined) {
    try {
      notifyUrl = checkDestination(services, input.notifyUrl, 'notifyUrl');
    } catch (err) {
      await services.store.read((tx) => refuseDuplicate(tx, scope, 'payout', input.thirdPartyId));
      throw err;
    }
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
  const key = { type: 'payout' as const, thirdPartyId: input.thirdPartyId };
  const created = await insertUnique(services, scope, key, () => services.store.createPayout({ transaction: payout, walletDelta: negateDecimal(input.amount) }));
  if (!created.created) throw new AppError('insufficient-funds', `The distribution wallet holds ${created.balance} and cannot cover ${input.amount}.`);
  return payout;
}
