// Store.createPayout as a unit of an ordinary transaction: what both stores run for a payout
// alone (PostgreSQL always; SQLite when its batch's bulk write could not take it:
// sqlite/bulk-payouts.ts writes the same rows for many payouts at once).
import type { PayoutCreated, PayoutCreation, Tx } from '../domain/store.ts';

/** The wallet could not cover the payout: thrown inside the unit so that its insert rolls back. */
class WalletShort extends Error {
  constructor(readonly balance: string) {
    super('the wallet cannot cover the payout');
  }
}

/**
 * The insert, then the debit (one statement on PostgreSQL): a repeated thirdPartyId fails the
 * insert first (UniqueViolation), whatever the wallet holds. Throws WalletShort when the wallet
 * is short; `walletShortAnswer` turns it into the answer once the unit has rolled back.
 */
export async function createPayoutIn(tx: Tx, c: PayoutCreation): Promise<PayoutCreated> {
  const balance = await tx.transactions.insertAndAdjustWallet(c.transaction, c.walletDelta);
  if (balance !== null) return { created: true };
  const env = await tx.tenants.getEnvironment(c.transaction.environmentId);
  if (!env) throw new Error(`environment ${c.transaction.environmentId} vanished`);
  throw new WalletShort(env.walletBalance);
}

/** A short wallet as `created: false` with its balance; any other error stays one. */
export function walletShortAnswer(err: unknown): PayoutCreated {
  if (err instanceof WalletShort) return { created: false, balance: err.balance };
  throw err;
}
