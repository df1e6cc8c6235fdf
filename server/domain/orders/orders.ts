// Orders of the v2 order API: creation (with its order.created event in the same
// transaction), lookup and payment history. Every read and write is scoped to the caller's
// tenant environment: another environment's order is as unknown as a made-up id.
import { createHash } from 'node:crypto';
import type { components } from '../../../generated/types/orders.ts';
import type { ReadTx, Tx } from '../store.ts';
import type { OrderRecord, TransactionRecord, UnnumberedOrder } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { newOrderId } from '../ids.ts';
import { orderCreatedRecords } from './event-data.ts';

/** The request body of `POST /v2/orders` as the contract defines it: a field added there reaches here. */
export type NewOrder = components['schemas']['CreateOrderRequest'];

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

export interface CreatedOrder extends OrderView {
  /** True when an Idempotency-Key replayed the first answer: nothing was created. */
  replayed: boolean;
}

function keyReused(key: string): AppError {
  return new AppError('idempotency-key-reused', `The Idempotency-Key ${key} was already used with another request body in this tenant environment.`);
}

/** SHA-256 of the order request with its keys sorted: the same JSON in any key order or spacing hashes the same. */
function requestHash(input: NewOrder): string {
  const canonical = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** The order exactly as its creation answered it: what a replay answers, whatever happened since. */
function asCreated(order: OrderRecord): OrderView {
  return {
    order: { ...order, receivedBaseUnits: '0', overpaymentBaseUnits: null, status: 'open', paymentStatus: 'unpaid', reviewReason: null, updatedAt: order.createdAt },
    payments: [],
  };
}

/** The first answer for a key already used: a replay for the same body, 422 for another. */
async function replay(tx: ReadTx, scope: Scope, key: string, hash: string): Promise<CreatedOrder | null> {
  const used = await tx.orders.findIdempotencyKey(scope.environmentId, key);
  if (!used) return null;
  if (used.requestHash !== hash) throw keyReused(key);
  const order = await tx.orders.get(scope.environmentId, used.orderId);
  if (!order) throw new Error(`idempotency key ${key} names a missing order ${used.orderId}`);
  return { ...asCreated(order), replayed: true };
}

/**
 * Creates an order, with its order.created event. With an Idempotency-Key, a key already used
 * in the environment replays the first answer (same body) or is refused (another body). The
 * store's unique key settles concurrent first uses, as thirdPartyId does for payouts: the
 * store writes nothing for the loser, which then reads the winner.
 */
export async function createOrder(services: Services, scope: Scope, input: NewOrder, idempotencyKey?: string): Promise<CreatedOrder> {
  const idem = idempotencyKey === undefined ? null : { key: idempotencyKey, requestHash: requestHash(input) };
  // A retry answers from a read, without a write of its own.
  const earlier = idem === null ? null : await services.store.read((tx) => replay(tx, scope, idem.key, idem.requestHash));
  if (earlier !== null) return earlier;
  const order = newOrder(services.clock.now(), scope, input);
  const result = await services.store.createOrder({ order, ...orderCreatedRecords(services, scope, order), idempotency: idem });
  if (result.created) return { order: result.order, payments: [], replayed: false };
  const winner = idem === null ? null : await services.store.read((tx) => replay(tx, scope, idem.key, idem.requestHash));
  if (winner === null) throw new Error(`the store refused order ${order.id} for a key it does not hold`);
  return winner;
}

function newOrder(now: number, scope: Scope, input: NewOrder): UnnumberedOrder {
  return {
    id: newOrderId(now),
    environmentId: scope.environmentId,
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
