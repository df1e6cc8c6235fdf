// Settlement of a pending payout, as the sandbox drives it in the test environment: it
// completes, or it is cancelled and its amount goes back to the wallet. Either way the
// payout-completed callback is recorded with the change (outbox), when there is a notifyUrl.
import type { TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { recordPayoutCallback } from '../events.ts';
import { describeType, requireTestEnvironment, transactionNotFound } from './records.ts';

export type SettlementStatus = 'success' | 'cancelled';

function notSettleable(t: TransactionRecord): AppError {
  const detail =
    t.type === 'payout'
      ? `Transaction ${t.id} is a payout in status ${t.status}; only pending payouts can be settled.`
      : `Transaction ${t.id} is ${describeType(t.type)}; only pending payouts can be settled.`;
  return new AppError('not-settleable', detail);
}

export async function settlePayout(
  services: Services,
  scope: Scope,
  input: { transactionId: string; status: SettlementStatus },
): Promise<TransactionRecord> {
  requireTestEnvironment(scope);
  return services.store.transaction(async (tx) => {
    const payout = await tx.transactions.get(scope.environmentId, input.transactionId);
    if (!payout) throw transactionNotFound(input.transactionId);
    if (payout.type !== 'payout' || payout.status !== 'pending') throw notSettleable(payout);
    // Only payments of orders may lack an amount in asset units; a payout always has one.
    const amount = payout.amount;
    if (amount === null) throw new Error(`payout ${payout.id} has no amount`);

    const now = services.clock.now();
    const next = input.status === 'success' ? 'completed' : 'cancelled';
    // Guarded by the current status, so a concurrent settlement cannot apply twice.
    if (!(await tx.transactions.updateStatus(scope.environmentId, payout.id, 'pending', next, now))) {
      const current = await tx.transactions.get(scope.environmentId, payout.id);
      throw notSettleable(current ?? payout);
    }
    if (next === 'cancelled') {
      const balance = await tx.tenants.adjustWallet(scope.environmentId, amount);
      if (balance === null) throw new Error(`wallet of ${scope.environmentId} refused a refund credit`);
    }
    if (payout.notifyUrl !== null && payout.thirdPartyId !== null) {
      await recordPayoutCallback(tx, services, scope, {
        transactionId: payout.id,
        thirdPartyId: payout.thirdPartyId,
        amount,
        status: input.status,
        notifyUrl: payout.notifyUrl,
      });
    }
    return { ...payout, status: next, completedAt: now };
  });
}
