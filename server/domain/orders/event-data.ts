// Order event data: the one place that turns an order into the snapshot an order event carries
// (webhook payload and events feed alike), so every event has the same shape.
import type { Tx } from '../../store/types.ts';
import type { OrderEventType, OrderRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { recordOrderEvent, type OrderEventData } from '../events.ts';

export type { OrderEvent, OrderEventData } from '../events.ts';

/**
 * The data of an order event: `status` is `open` for order.created and the payment state for
 * payment events; optional fields appear only when they have a value (never null), and
 * overpaymentBaseUnits only when nonzero.
 */
export function orderEventData(order: OrderRecord, type: OrderEventType): OrderEventData {
  return {
    orderId: order.id,
    merchantReference: order.merchantReference,
    amountMinor: order.amountMinor,
    currency: 'USD',
    status: type === 'order.created' ? 'open' : order.paymentStatus,
    ...(order.assetId !== null ? { assetId: order.assetId } : {}),
    ...(order.networkId !== null ? { networkId: order.networkId } : {}),
    ...(order.amountBaseUnits !== null ? { amountBaseUnits: order.amountBaseUnits } : {}),
    receivedBaseUnits: order.receivedBaseUnits,
    ...(hasOverpayment(order) ? { overpaymentBaseUnits: order.overpaymentBaseUnits } : {}),
    ...(order.paymentStatus === 'review_required' && order.reviewReason !== null ? { reviewReason: order.reviewReason } : {}),
  };
}

export function hasOverpayment(order: OrderRecord): order is OrderRecord & { overpaymentBaseUnits: string } {
  return order.overpaymentBaseUnits !== null && order.overpaymentBaseUnits !== '0';
}

/**
 * Records an order event for the order as it now stands, in the caller's transaction (the
 * outbox). With `insert`, the order is new and is written together with its event.
 */
export async function emitOrderEvent(tx: Tx, services: Services, scope: Scope, type: OrderEventType, order: OrderRecord, opts: { insert?: boolean } = {}): Promise<void> {
  await recordOrderEvent(tx, services, scope, {
    type,
    data: orderEventData(order, type),
    orderId: order.id,
    merchantReference: order.merchantReference,
    ...(opts.insert === true ? { newOrder: order } : {}),
  });
}
