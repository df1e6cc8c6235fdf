// Payments that are not linked to an order, as the sandbox creates them: held in
// pending_confirmation until they are confirmed or refunded.
import type { TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { newTransaction, requireTestEnvironment } from './records.ts';

export async function createUnlinkedPayment(
  services: Services,
  scope: Scope,
  input: { userId: string; amount: string; txHash: string },
): Promise<TransactionRecord> {
  requireTestEnvironment(scope);
  const payment = newTransaction(scope, services.clock.now(), {
    type: 'payment',
    side: 'credit',
    status: 'pending_confirmation',
    amount: input.amount,
    userId: input.userId,
    txHash: input.txHash,
  });
  await services.store.transaction((tx) => tx.transactions.insert(payment));
  return payment;
}
