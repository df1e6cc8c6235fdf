// Refunds of payments that are not linked to an order (pending_confirmation) to a service
// account of the tenant, identified by e-mail.
import type { TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { describeType, transactionNotFound } from './records.ts';

export interface RefundResult {
  status: 'refunded';
  message: string;
  payment: TransactionRecord;
}

function notRefundable(t: TransactionRecord): AppError {
  const detail =
    t.type === 'payment'
      ? `Transaction ${t.id} is a payment in status ${t.status}; only payments in pending_confirmation can be refunded.`
      : `Transaction ${t.id} is ${describeType(t.type)}; only payments in pending_confirmation can be refunded.`;
  return new AppError('not-refundable', detail);
}

export async function refundPayment(services: Services, scope: Scope, input: { txId: string; email: string }): Promise<RefundResult> {
  // Service accounts are stored lower-cased: e-mail lookup is case-insensitive.
  const email = input.email.trim().toLowerCase();
  return services.store.transaction(async (tx) => {
    const payment = await tx.transactions.get(scope.environmentId, input.txId);
    if (!payment) throw transactionNotFound(input.txId);
    if (payment.type !== 'payment' || payment.status !== 'pending_confirmation') throw notRefundable(payment);
    const account = await tx.tenants.findServiceAccount(scope.tenantId, email);
    if (!account) throw new AppError('unknown-refund-account', `No service account has the e-mail ${input.email}.`);

    const now = services.clock.now();
    const changed = await tx.transactions.updateStatus(scope.environmentId, payment.id, 'pending_confirmation', 'refunded', now, {
      refundEmail: account.email,
    });
    if (!changed) throw notRefundable((await tx.transactions.get(scope.environmentId, payment.id)) ?? payment);
    return {
      status: 'refunded',
      message: `Payment ${payment.id} of ${payment.amount} was refunded to the service account ${account.email}.`,
      payment: { ...payment, status: 'refunded', completedAt: now, refundEmail: account.email },
    };
  });
}
