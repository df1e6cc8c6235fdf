// Order event data: the one place that turns an order into the snapshot an order event carries
// (webhook payload and events feed alike), so every event has the same shape.
import type { Tx } from '../store.ts';
import type { OrderEventType, OrderRecord, UnnumberedOrder } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { orderEventRecords, recordOrderEvent, type NewOrderEvent, type OrderEventData } from '../events.ts';

export type { OrderEvent, OrderEventData } from '../events.ts';

/**
 * The data of an order event: `status` is `open` for order.created and the payment state for
 * payment events; optional fields appear only when they have a value (never null), and
 * overpaymentBaseUnits only when nonzero.
 */
export function orderEventData(order: UnnumberedOrder, type: OrderEventType): OrderEventData {
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

export function hasOverpayment<O extends UnnumberedOrder>(order: O): order is O & { overpaymentBaseUnits: string } {
  return order.overpaymentBaseUnits !== null && order.overpaymentBaseUnits !== '0';
}

/** Records an order event for the order as it now stands, in the caller's transaction (the outbox). */
export async function emitOrderEvent(tx: Tx, services: Services, scope: Scope, type: OrderEventType, order: OrderRecord): Promise<void> {
  await recordOrderEvent(tx, services, scope, orderEvent(type, order));
}

/** The order.created event of a new order (not yet numbered) and its delivery: Store.createOrder writes them with it. */
export function orderCreatedRecords(services: Services, scope: Scope, order: UnnumberedOrder): ReturnType<typeof orderEventRecords> {
  return orderEventRecords(services, scope, orderEvent('order.created', order));
}

function orderEvent(type: OrderEventType, order: UnnumberedOrder): NewOrderEvent {
  return { type, data: orderEventData(order, type), orderId: order.id, merchantReference: order.merchantReference };
}
