// Orders and their payments as the contract shapes (spec/common/orders.yaml). Optional fields
// are left out, never null; overpaymentBaseUnits only when nonzero.
import type { components } from '../../../generated/types/orders.ts';
import { hasOverpayment } from '../../domain/orders/event-data.ts';
import type { OrderView } from '../../domain/orders/orders.ts';
import type { OrderRecord, TransactionRecord } from '../../domain/model.ts';
import { isoTime } from '../../domain/iso-time.ts';

type Schemas = components['schemas'];
export type OrderBody = Schemas['Order'];
export type OrderPaymentBody = Schemas['OrderPayment'];
export type OrderPaymentListBody = Schemas['OrderPaymentList'];

export function presentPayment(t: TransactionRecord): OrderPaymentBody {
  // A deposit is pending (unverified), completed (credited) or revoked; anything else, or a
  // transaction without the deposit's fields, is not a payment of an order.
  if ((t.status !== 'pending' && t.status !== 'completed' && t.status !== 'revoked') || t.txHash === null || t.amountBaseUnits === null) {
    throw new Error(`transaction ${t.id} is not an order payment`);
  }
  return {
    transactionId: t.id,
    txHash: t.txHash,
    amountBaseUnits: t.amountBaseUnits,
    verified: t.verified === true,
    status: t.status,
    createdAt: isoTime(t.createdAt),
  };
}

function amounts(o: OrderRecord): { receivedBaseUnits: string; overpaymentBaseUnits?: string } {
  return { receivedBaseUnits: o.receivedBaseUnits, ...(hasOverpayment(o) ? { overpaymentBaseUnits: o.overpaymentBaseUnits } : {}) };
}

export function presentOrder({ order: o, payments }: OrderView): OrderBody {
  return {
    orderId: o.id,
    orderNumber: o.orderNumber,
    merchantReference: o.merchantReference,
    amountMinor: o.amountMinor,
    currency: 'USD',
    status: o.status,
    paymentStatus: o.paymentStatus,
    ...(o.assetId !== null ? { assetId: o.assetId } : {}),
    ...(o.networkId !== null ? { networkId: o.networkId } : {}),
    ...(o.amountBaseUnits !== null ? { amountBaseUnits: o.amountBaseUnits } : {}),
    ...amounts(o),
    ...(o.paymentStatus === 'review_required' && o.reviewReason !== null ? { reviewReason: o.reviewReason } : {}),
    createdAt: isoTime(o.createdAt),
    updatedAt: isoTime(o.updatedAt),
    payments: payments.map(presentPayment),
  };
}

export function presentPaymentList({ order: o, payments }: OrderView): OrderPaymentListBody {
  return {
    orderId: o.id,
    orderNumber: o.orderNumber,
    status: o.status,
    paymentStatus: o.paymentStatus,
    ...amounts(o),
    data: payments.map(presentPayment),
  };
}
