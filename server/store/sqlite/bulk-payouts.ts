// Store.createPayout for the payouts a group-committed batch holds, together (a Bulk of
// group-commit.ts), as bulk-orders.ts does for orders. Alone, a payout is five statements (a
// savepoint, its row, the wallet's read and update, the release); here a batch's payouts take
// one multi-row INSERT, and one read and one update of each environment's wallet for their sum.
//
// Each still decides as if it ran alone, in the order queued: a repeated thirdPartyId fails
// the INSERT, and a wallet that cannot cover the batch's sum throws; either way the bulk's
// savepoint rolls back and each payout runs alone (createPayoutIn), so only the duplicate, or
// only the payouts past what the wallet covers, are refused. When the wallet covers the sum,
// it covers every prefix of it too (each amount is positive), which is what running alone in
// order would have found.
import type { PayoutCreated, PayoutCreation } from '../../domain/store.ts';
import { addDecimal, compareDecimal } from '../../money/decimal.ts';
import type { TxScope } from '../tx.ts';
import type { Bulk } from './group-commit.ts';
import type { Db } from './db.ts';
import { mapping as m } from './rows.ts';
import { MultiInsert, columnsOf } from './multi-insert.ts';

/** One payout of the batch, and the scope its caller settles at commit (the transactions version). */
export interface BulkPayout {
  creation: PayoutCreation;
  scope: TxScope;
}

/** The batch could not be written together: its savepoint rolls back and each payout runs alone. */
class RunAlone extends Error {}

/** The bulk kind of new payouts on one SQLite connection. */
export function sqliteBulkPayouts(db: Db): Bulk<BulkPayout, PayoutCreated> {
  let insert: MultiInsert | null = null;
  return {
    run(items) {
      const rows = items.map(({ creation }) => m.transactionToRow(creation.transaction));
      insert ??= new MultiInsert('transactions', columnsOf(rows[0]!));
      insert.run(db, rows); // a repeated thirdPartyId throws: each runs alone
      debitWallets(db, items);
      for (const { creation, scope } of items) (scope.touched ??= new Set()).add(creation.transaction.environmentId);
      return items.map(() => ({ created: true }));
    },
  };
}

/** Each environment's wallet debited by its payouts' sum, or RunAlone when one cannot cover it. */
function debitWallets(db: Db, items: readonly BulkPayout[]): void {
  const sums = new Map<string, string>();
  for (const { creation: c } of items) {
    const environmentId = c.transaction.environmentId;
    sums.set(environmentId, addDecimal(sums.get(environmentId) ?? '0', c.walletDelta));
  }
  for (const [environmentId, delta] of sums) {
    // The batch holds SQLite's write lock: the read and the update cannot race.
    const r = db.get<{ wallet_balance: string }>('SELECT wallet_balance FROM environments WHERE id = ?', environmentId);
    if (!r) throw new RunAlone(`environment ${environmentId} not found`);
    const next = addDecimal(r.wallet_balance, delta);
    if (compareDecimal(next, '0') < 0) throw new RunAlone('a wallet cannot cover its payouts together');
    db.run('UPDATE environments SET wallet_balance = ? WHERE id = ?', next, environmentId);
  }
}
