// Store.createOrder as a unit of an ordinary transaction: what both stores' group commits fall
// back to for an order their bulk writes could not take (sqlite/bulk-orders.ts and
// postgres/bulk-orders.ts write the same rows for many orders at once).
import { UniqueViolation, type OrderCreated, type OrderCreation, type Tx } from '../domain/store.ts';

/** The order's writes in the caller's transaction; `created: false` when its key is already recorded. */
export async function createOrderIn(tx: Tx, c: OrderCreation): Promise<OrderCreated> {
  const environmentId = c.order.environmentId;
  if (c.idempotency !== null && (await tx.orders.findIdempotencyKey(environmentId, c.idempotency.key)) !== null) return { created: false };
  const order = { ...c.order, orderNumber: await tx.orders.nextOrderNumber(environmentId) };
  const delivery = await tx.deliveries.insertWithEvent(c.event, c.delivery, order);
  if (c.idempotency !== null) {
    await tx.orders.insertIdempotencyKey(environmentId, c.idempotency.key, { orderId: order.id, requestHash: c.idempotency.requestHash, createdAt: order.createdAt });
  }
  return { created: true, order, delivery };
}

/** A key recorded by a concurrent transaction after the lookup: `created: false` as well; any other error stays one. */
export function keyTakenMeanwhile(err: unknown): OrderCreated {
  if (err instanceof UniqueViolation && err.constraint === 'idempotency_key') return { created: false };
  throw err;
}
