import type { OrderRepo } from '../../types.ts';
import type { Conn } from '../db.ts';
import type { OrderNumbers } from '../order-numbers.ts';
import { orderFromRow, orderToRow, type OrderRow } from '../rows.ts';

export function formatOrderNumber(n: number): string {
  return `ORD-${String(n).padStart(6, '0')}`;
}

/** Numbers come from `numbers`, outside the transaction (autocommit, in blocks): see order-numbers.ts. */
export function orderRepo(db: Conn, numbers: OrderNumbers): OrderRepo {
  return {
    async nextOrderNumber(environmentId) {
      return formatOrderNumber(await numbers.next(environmentId));
    },
    async insert(o) {
      await db.insert('orders', orderToRow(o));
    },
    async get(environmentId, id) {
      const r = await db.one<OrderRow>('SELECT * FROM orders WHERE environment_id = $1 AND id = $2', [environmentId, id]);
      return r ? orderFromRow(r) : null;
    },
    async update(o) {
      // Identity, environment, number and creation time never change.
      const r = orderToRow(o);
      await db.run(
        `UPDATE orders SET merchant_reference = $3, amount_minor = $4, asset_id = $5, network_id = $6, amount_base_units = $7,
                received_base_units = $8, overpayment_base_units = $9, status = $10, payment_status = $11, review_reason = $12,
                updated_at = $13
          WHERE environment_id = $1 AND id = $2`,
        [
          r.environment_id,
          r.id,
          r.merchant_reference,
          r.amount_minor,
          r.asset_id,
          r.network_id,
          r.amount_base_units,
          r.received_base_units,
          r.overpayment_base_units,
          r.status,
          r.payment_status,
          r.review_reason,
          r.updated_at,
        ],
      );
    },
    async findIdempotencyKey(environmentId, key) {
      const r = await db.one<{ order_id: string; request_hash: string; created_at: number }>(
        'SELECT order_id, request_hash, created_at FROM order_idempotency_keys WHERE environment_id = $1 AND idempotency_key = $2',
        [environmentId, key],
      );
      return r ? { orderId: r.order_id, requestHash: r.request_hash, createdAt: r.created_at } : null;
    },
    async insertIdempotencyKey(environmentId, key, record) {
      await db.run('INSERT INTO order_idempotency_keys (environment_id, idempotency_key, request_hash, order_id, created_at) VALUES ($1, $2, $3, $4, $5)', [
        environmentId,
        key,
        record.requestHash,
        record.orderId,
        record.createdAt,
      ]);
    },
  };
}
