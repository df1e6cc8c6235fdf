// Orders of the v2 order API: creation (with its order.created event in the same
// transaction), lookup and payment history. Every read and write is scoped to the caller's
// tenant environment: another environment's order is as unknown as a made-up id.
import type { ReadTx, Tx } from '../../store/types.ts';
import type { OrderRecord, TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { newOrderId } from '../ids.ts';
import { emitOrderEvent } from './event-data.ts';

export interface NewOrder {
  merchantReference: string;
  /** USD cents. */
  amountMinor: number;
  assetId?: string;
  networkId?: string;
  /** Expected token amount in base units (decimal string, > 0). */
  amountBaseUnits?: string;
}

/** An order and its payment transactions, oldest first. */
export interface OrderView {
  order: OrderRecord;
  payments: TransactionRecord[];
}

export function orderNotFound(orderId: string): AppError {
  return new AppError('not-found', `No order ${orderId} exists in this tenant environment.`);
}

/** The order's deposits: the `payment` transactions that carry its id, oldest first. */
export async function paymentsOf(tx: ReadTx, scope: Scope, orderId: string): Promise<TransactionRecord[]> {
  const rows = await tx.transactions.listByOrder(scope.environmentId, orderId);
  return rows.filter((t) => t.type === 'payment');
}

async function findOrder(tx: ReadTx, scope: Scope, orderId: string): Promise<OrderRecord> {
  const order = await tx.orders.get(scope.environmentId, orderId);
  if (!order) throw orderNotFound(orderId);
  return order;
}

/** The order for a change (deposit, review, cancel): 404 when unknown, 409 when cancelled. */
export async function findOpenOrder(tx: Tx, scope: Scope, orderId: string): Promise<OrderRecord> {
  const order = await findOrder(tx, scope, orderId);
  if (order.status !== 'open') {
    throw new AppError('order-not-open', `Order ${orderId} is ${order.status} and takes no further changes.`);
  }
  return order;
}

export async function createOrder(services: Services, scope: Scope, input: NewOrder): Promise<OrderView> {
  return services.store.transaction(async (tx) => {
    const now = services.clock.now();
    const order: OrderRecord = {
      id: newOrderId(),
      environmentId: scope.environmentId,
      orderNumber: await tx.orders.nextOrderNumber(scope.environmentId),
      merchantReference: input.merchantReference,
      amountMinor: input.amountMinor,
      assetId: input.assetId ?? null,
      networkId: input.networkId ?? null,
      amountBaseUnits: input.amountBaseUnits ?? null,
      receivedBaseUnits: '0',
      overpaymentBaseUnits: null,
      status: 'open',
      paymentStatus: 'unpaid',
      reviewReason: null,
      createdAt: now,
      updatedAt: now,
    };
    await tx.orders.insert(order);
    await emitOrderEvent(tx, services, scope, 'order.created', order);
    return { order, payments: [] };
  });
}

/** The current order; a cancelled order answers 404 like an unknown one (its payments stay readable). */
export async function getOrder(services: Services, scope: Scope, orderId: string): Promise<OrderView> {
  return services.store.read(async (tx) => {
    const order = await findOrder(tx, scope, orderId);
    if (order.status === 'cancelled') {
      throw new AppError('not-found', `Order ${orderId} is cancelled; its payments remain available at /v2/orders/${orderId}/payments.`);
    }
    return { order, payments: await paymentsOf(tx, scope, orderId) };
  });
}

/** The payment history, cancelled orders included (for reconciliation). */
export async function listOrderPayments(services: Services, scope: Scope, orderId: string): Promise<OrderView> {
  return services.store.read(async (tx) => {
    const order = await findOrder(tx, scope, orderId);
    return { order, payments: await paymentsOf(tx, scope, orderId) };
  });
}
