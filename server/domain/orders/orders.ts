// Orders of the v2 order API: creation (with its order.created event in the same
// transaction), lookup and payment history. Every read and write is scoped to the caller's
// tenant environment: another environment's order is as unknown as a made-up id.
import { createHash } from 'node:crypto';
import type { components } from '../../../generated/types/orders.ts';
import { UniqueViolation, type ReadTx, type Tx } from '../../store/types.ts';
import type { OrderRecord, TransactionRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { newOrderId } from '../ids.ts';
import { emitOrderEvent } from './event-data.ts';

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
 * in the environment replays the first answer (same body) or is refused (another body); the
 * store's unique key settles concurrent duplicates, as thirdPartyId does for payouts: the
 * loser's transaction rolls back and it reads the winner afresh.
 */
export async function createOrder(services: Services, scope: Scope, input: NewOrder, idempotencyKey?: string): Promise<CreatedOrder> {
  if (idempotencyKey === undefined) return services.store.transaction((tx) => createIn(tx, services, scope, input, null));
  const idem = { key: idempotencyKey, hash: requestHash(input) };
  try {
    return await services.store.transaction((tx) => createIn(tx, services, scope, input, idem));
  } catch (err) {
    if (!(err instanceof UniqueViolation) || err.constraint !== 'idempotency_key') throw err;
    const winner = await services.store.read((tx) => replay(tx, scope, idem.key, idem.hash));
    if (!winner) throw err;
    return winner;
  }
}

async function createIn(tx: Tx, services: Services, scope: Scope, input: NewOrder, idem: { key: string; hash: string } | null): Promise<CreatedOrder> {
  if (idem !== null) {
    const earlier = await replay(tx, scope, idem.key, idem.hash);
    if (earlier) return earlier;
  }
  const now = services.clock.now();
  const order: OrderRecord = {
    id: newOrderId(now),
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
  // The order with its order.created event (and delivery): one statement on PostgreSQL, where
  // each statement is a round trip on the group commit's one executing connection.
  await emitOrderEvent(tx, services, scope, 'order.created', order, { insert: true });
  if (idem !== null) await tx.orders.insertIdempotencyKey(scope.environmentId, idem.key, { orderId: order.id, requestHash: idem.hash, createdAt: now });
  return { order, payments: [], replayed: false };
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
