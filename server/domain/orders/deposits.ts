// Sandbox deposits: a deposit to an order, as if it had arrived on chain. Every deposit is a
// `payment` transaction carrying the order's id and number and the deposit's txHash; a
// verified one is credited to the order and may move its payment state.
import type { OrderRecord, PaymentStatus, TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { newTransactionId } from '../ids.ts';
import { AMOUNT_RULE, ASSET_DECIMALS } from '../../../generated/vocabulary.ts';
import { addBaseUnits, baseUnitsToDecimal, compareBaseUnits, subtractBaseUnits } from '../../money/decimal.ts';
import { emitOrderEvent } from './event-data.ts';
import { findOpenOrder, paymentsOf, type OrderView } from './orders.ts';

export interface Deposit {
  /** Token amount in base units: digits, > 0, any length. */
  amountBaseUnits: string;
  verified: boolean;
  txHash: string;
}

export interface DepositResult extends OrderView {
  payment: TransactionRecord;
}

/**
 * The payment state after a verified credit. Only an order that is not yet paid moves: to
 * `paid` once the credits cover the expected amount (or on the first credit when no amount is
 * expected), else to `partially_paid`. `paid` stays `paid` (a surplus), and `review_required`
 * stays until someone investigates.
 */
function paymentStateAfterCredit(order: OrderRecord, received: string): PaymentStatus {
  switch (order.paymentStatus) {
    case 'unpaid':
    case 'partially_paid':
      if (order.amountBaseUnits === null) return 'paid';
      return compareBaseUnits(received, order.amountBaseUnits) >= 0 ? 'paid' : 'partially_paid';
    case 'paid':
    case 'review_required':
      return order.paymentStatus;
  }
}

/** receivedBaseUnits minus amountBaseUnits when positive, else null (absent, never "0"). */
function overpayment(amountBaseUnits: string | null, received: string): string | null {
  if (amountBaseUnits === null || compareBaseUnits(received, amountBaseUnits) <= 0) return null;
  return subtractBaseUnits(received, amountBaseUnits);
}

/**
 * The deposit in the asset's units (an `Amount`), when the asset's decimals are known and the
 * value fits the Amount rule exactly; else null, and amountBaseUnits is the only amount.
 */
export function amountInAssetUnits(assetId: string | null, amountBaseUnits: string): string | null {
  const decimals = assetId === null ? undefined : ASSET_DECIMALS[assetId];
  return decimals === undefined ? null : baseUnitsToDecimal(amountBaseUnits, decimals, AMOUNT_RULE);
}

export async function recordDeposit(services: Services, scope: Scope, orderId: string, deposit: Deposit): Promise<DepositResult> {
  return services.store.transaction(async (tx) => {
    const order = await findOpenOrder(tx, scope, orderId);
    const now = services.clock.now();
    const payment: TransactionRecord = {
      id: newTransactionId(now),
      environmentId: scope.environmentId,
      tenantId: scope.tenantId,
      type: 'payment',
      side: 'credit',
      // An unverified deposit waits as `pending`; a verified one is credited at once.
      status: deposit.verified ? 'completed' : 'pending',
      // An order has no service user.
      userId: null,
      amount: amountInAssetUnits(order.assetId, deposit.amountBaseUnits),
      amountBaseUnits: deposit.amountBaseUnits,
      thirdPartyId: null,
      notifyUrl: null,
      asset: null,
      durationInMonths: null,
      orderId: order.id,
      orderNumber: order.orderNumber,
      txHash: deposit.txHash,
      verified: deposit.verified,
      refundEmail: null,
      createdAt: now,
      completedAt: deposit.verified ? now : null,
    };
    await tx.transactions.insert(payment);
    const payments = await paymentsOf(tx, scope, order.id);

    // An unverified deposit is listed, and changes nothing else about the order.
    if (!deposit.verified) return { order, payments, payment };

    // receivedBaseUnits is, by definition, the sum of the completed payments.
    const received = payments.filter((p) => p.status === 'completed').reduce((sum, p) => addBaseUnits(sum, p.amountBaseUnits ?? '0'), '0');
    const paymentStatus = paymentStateAfterCredit(order, received);
    const updated: OrderRecord = {
      ...order,
      receivedBaseUnits: received,
      overpaymentBaseUnits: overpayment(order.amountBaseUnits, received),
      paymentStatus,
      updatedAt: now,
    };
    await tx.orders.update(updated);
    // order.paid exactly when this credit made the order paid; partial credits, surpluses
    // after paid and credits while under review send nothing.
    if (paymentStatus === 'paid' && order.paymentStatus !== 'paid') {
      await emitOrderEvent(tx, services, scope, 'order.paid', updated);
    }
    return { order: updated, payments, payment };
  });
}
