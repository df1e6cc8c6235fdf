// Sandbox review: a late, cancelled or revoked deposit puts the order's payment under review,
// whatever its payment state was. Every call emits order.payment_review_required, so a
// merchant can rehearse receiving it more than once; amounts and payments stay as they are.
import type { OrderRecord, ReviewReason } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { emitOrderEvent } from './event-data.ts';
import { findOpenOrder, paymentsOf, type OrderView } from './orders.ts';

export async function markOrderForReview(services: Services, scope: Scope, orderId: string, reason: ReviewReason): Promise<OrderView> {
  return services.store.transaction(async (tx) => {
    const order = await findOpenOrder(tx, scope, orderId);
    const updated: OrderRecord = { ...order, paymentStatus: 'review_required', reviewReason: reason, updatedAt: services.clock.now() };
    await tx.orders.update(updated);
    await emitOrderEvent(tx, services, scope, 'order.payment_review_required', updated);
    return { order: updated, payments: await paymentsOf(tx, scope, orderId) };
  });
}
