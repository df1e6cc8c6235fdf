// Sandbox cancellation: the order's lifecycle status becomes `cancelled`. Its payment state,
// amounts and payments are kept for reconciliation, and no event is emitted (the interface
// names none for cancellation). Afterwards the order takes no further changes.
import type { OrderRecord } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { findOpenOrder, paymentsOf, type OrderView } from './orders.ts';

export async function cancelOrder(services: Services, scope: Scope, orderId: string): Promise<OrderView> {
  return services.store.transaction(async (tx) => {
    const order = await findOpenOrder(tx, scope, orderId);
    const updated: OrderRecord = { ...order, status: 'cancelled', updatedAt: services.clock.now() };
    await tx.orders.update(updated);
    return { order: updated, payments: await paymentsOf(tx, scope, orderId) };
  });
}
