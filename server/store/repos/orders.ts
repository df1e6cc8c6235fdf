import type { Sql } from '../sql.ts';
import type { IdempotencyKeyRecord, OrderRepo } from '../../domain/store.ts';
import { getter, inserter } from './query.ts';

/** The row of order_idempotency_keys that records `key` for `record`'s order. */
export function idempotencyKeyRow(environmentId: string, key: string, record: IdempotencyKeyRecord) {
  return { environment_id: environmentId, idempotency_key: key, request_hash: record.requestHash, order_id: record.orderId, created_at: record.createdAt };
}

export function formatOrderNumber(n: number): string {
  return `ORD-${String(n).padStart(6, '0')}`;
}

/**
 * `nextNumber` is the dialect's own: SQLite counts in the transaction, PostgreSQL in blocks
 * outside it (postgres/order-numbers.ts).
 */
export function orderRepo<B, J>(sql: Sql<B, J>, nextNumber: (environmentId: string) => Promise<number>): OrderRepo {
  const m = sql.map;
  return {
    async nextOrderNumber(environmentId) {
      return formatOrderNumber(await nextNumber(environmentId));
    },
    insert: inserter(sql, 'orders', m.orderToRow),
    get: getter(sql, 'orders', m.orderFromRow),
    async update(o) {
      // Identity, environment, number and creation time never change.
      const r = m.orderToRow(o);
      await sql.run(
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
      const r = await sql.one<{ order_id: string; request_hash: string; created_at: number }>(
        'SELECT order_id, request_hash, created_at FROM order_idempotency_keys WHERE environment_id = $1 AND idempotency_key = $2',
        [environmentId, key],
      );
      return r === undefined ? null : { orderId: r.order_id, requestHash: r.request_hash, createdAt: Number(r.created_at) };
    },
    async insertIdempotencyKey(environmentId, key, record) {
      await sql.insert('order_idempotency_keys', idempotencyKeyRow(environmentId, key, record));
    },
  };
}
