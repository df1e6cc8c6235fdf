import type { OrderRepo } from '../../types.ts';
import type { Db } from '../db.ts';
import { insertSql, orderFromRow, orderToRow, type OrderRow } from '../rows.ts';

export function formatOrderNumber(n: number): string {
  return `ORD-${String(n).padStart(6, '0')}`;
}

export function orderRepo(db: Db): OrderRepo {
  return {
    async nextOrderNumber(environmentId) {
      const r = db.get<{ last_value: number }>(
        `INSERT INTO order_number_sequences (environment_id, last_value) VALUES (?, 1)
         ON CONFLICT (environment_id) DO UPDATE SET last_value = last_value + 1
         RETURNING last_value`,
        environmentId,
      );
      if (!r) throw new Error('order number sequence returned no row');
      return formatOrderNumber(r.last_value);
    },
    async insert(o) {
      const row = orderToRow(o);
      db.run(insertSql('orders', row), row);
    },
    async get(environmentId, id) {
      const r = db.get<OrderRow>('SELECT * FROM orders WHERE environment_id = ? AND id = ?', environmentId, id);
      return r ? orderFromRow(r) : null;
    },
    async update(o) {
      // Identity, environment, number and creation time never change.
      db.run(
        `UPDATE orders SET merchant_reference = @merchant_reference, amount_minor = @amount_minor, asset_id = @asset_id,
                network_id = @network_id, amount_base_units = @amount_base_units, received_base_units = @received_base_units,
                overpayment_base_units = @overpayment_base_units, status = @status, payment_status = @payment_status,
                review_reason = @review_reason, updated_at = @updated_at
          WHERE environment_id = @environment_id AND id = @id`,
        orderToRow(o),
      );
    },
    async findIdempotencyKey(environmentId, key) {
      const r = db.get<{ order_id: string; request_hash: string; created_at: number }>(
        'SELECT order_id, request_hash, created_at FROM order_idempotency_keys WHERE environment_id = ? AND idempotency_key = ?',
        environmentId,
        key,
      );
      return r ? { orderId: r.order_id, requestHash: r.request_hash, createdAt: r.created_at } : null;
    },
    async insertIdempotencyKey(environmentId, key, record) {
      db.run(
        'INSERT INTO order_idempotency_keys (environment_id, idempotency_key, request_hash, order_id, created_at) VALUES (?, ?, ?, ?, ?)',
        environmentId,
        key,
        record.requestHash,
        record.orderId,
        record.createdAt,
      );
    },
  };
}
