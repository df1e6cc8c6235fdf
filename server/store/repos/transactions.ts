import { assertLimit, decodeCursor, pageOf } from '../cursor.ts';
import { InvalidCursorError } from '../../domain/store-errors.ts';
import type { TransactionRecord } from '../../domain/model.ts';
import type { TransactionRow } from '../rows.ts';
import type { Sql } from '../sql.ts';
import type { TransactionRepo } from '../../domain/store.ts';
import type { DialectHooks } from './hooks.ts';
import { all, bind, first, getter, inserter } from './query.ts';

/** `changed` hears of every write that went in, by environment (the store's transactionsVersion). */
export function transactionRepo<B, J>(
  sql: Sql<B, J>,
  hooks: Pick<DialectHooks, 'insertionOrder' | 'adjustWallet' | 'insertAndAdjustWallet'>,
  changed: (environmentId: string) => void,
): TransactionRepo {
  const m = sql.map;
  // Newest first; insertion order (PostgreSQL's seq, SQLite's rowid) breaks ties within a millisecond.
  const newest = `ORDER BY created_at DESC, ${hooks.insertionOrder} DESC`;
  const insertRow = inserter(sql, 'transactions', m.transactionToRow);
  // A statement that throws (a UniqueViolation) changed nothing: noted only once it went in.
  const insert = async (t: TransactionRecord): Promise<void> => {
    await insertRow(t);
    changed(t.environmentId);
  };
  return {
    insert,
    async insertAndAdjustWallet(t, delta) {
      if (hooks.insertAndAdjustWallet) {
        const balance = await hooks.insertAndAdjustWallet({ table: 'transactions', row: m.transactionToRow(t) }, t.environmentId, delta);
        changed(t.environmentId);
        return balance;
      }
      await insert(t);
      return hooks.adjustWallet(t.environmentId, delta);
    },
    get: getter(sql, 'transactions', m.transactionFromRow),
    async findByThirdPartyId(environmentId, type, thirdPartyId) {
      return first(sql, m.transactionFromRow, 'SELECT * FROM transactions WHERE environment_id = $1 AND type = $2 AND third_party_id = $3', [
        environmentId,
        type,
        thirdPartyId,
      ]);
    },
    async updateStatus(environmentId, id, from, to, completedAt, extra) {
      // A null completedAt keeps the recorded one; a refund email is only ever added.
      const rows = await sql.run(
        `UPDATE transactions
            SET status = $4, completed_at = COALESCE(CAST($5 AS BIGINT), completed_at), refund_email = COALESCE(CAST($6 AS TEXT), refund_email)
          WHERE environment_id = $1 AND id = $2 AND status = $3`,
        [environmentId, id, from, to, completedAt, extra?.refundEmail ?? null],
      );
      if (rows > 0) changed(environmentId);
      return rows > 0;
    },
    async listByUser(environmentId, userId, { transactionId, limit, cursor }) {
      assertLimit(limit);
      const order = hooks.insertionOrder;
      const where = ['environment_id = $1', 'user_id = $2'];
      const params: unknown[] = [environmentId, userId];
      if (transactionId !== undefined) where.push(`id = ${bind(params, transactionId)}`);
      if (cursor !== null) {
        // The cursor is the insertion order (seq, rowid) of the last row shown; it must be a row of this user's list.
        const seq = decodeCursor(cursor);
        const last = await sql.one<{ created_at: number }>(`SELECT created_at FROM transactions WHERE ${order} = $1 AND environment_id = $2 AND user_id = $3`, [seq, environmentId, userId]);
        if (last === undefined) throw new InvalidCursorError(cursor);
        const at = Number(last.created_at);
        where.push(`(created_at < ${bind(params, at)} OR (created_at = ${bind(params, at)} AND ${order} < ${bind(params, seq)}))`);
      }
      const rows = await sql.rows<TransactionRow<B> & { page_seq: number }>(
        `SELECT ${order} AS page_seq, * FROM transactions WHERE ${where.join(' AND ')} ${newest} LIMIT ${bind(params, limit + 1)}`,
        params,
      );
      return pageOf(rows, limit, (r) => Number(r.page_seq), m.transactionFromRow);
    },
    async search(environmentId, q) {
      const where = ['environment_id = $1'];
      const params: unknown[] = [environmentId];
      if (q.orderNumber !== undefined) where.push(`order_number = ${bind(params, q.orderNumber)}`);
      if (q.txHash !== undefined) where.push(`tx_hash = ${bind(params, q.txHash)}`);
      if (params.length === 1) return null;
      return first(sql, m.transactionFromRow, `SELECT * FROM transactions WHERE ${where.join(' AND ')} ${newest} LIMIT 1`, params);
    },
    async listByOrder(environmentId, orderId) {
      // Oldest first: the order's payments in the sequence they happened.
      return all(
        sql,
        m.transactionFromRow,
        `SELECT * FROM transactions WHERE environment_id = $1 AND order_id = $2 ORDER BY created_at, ${hooks.insertionOrder}`,
        [environmentId, orderId],
      );
    },
  };
}
