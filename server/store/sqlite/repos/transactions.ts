import { assertLimit, decodeCursor, pageOf } from '../../cursor.ts';
import { InvalidCursorError } from '../../errors.ts';
import type { TransactionRepo } from '../../types.ts';
import type { Db } from '../db.ts';
import { insertSql, transactionFromRow, transactionToRow, type TransactionRow } from '../rows.ts';

// Newest first; ids break ties between rows created in the same millisecond.
// rowid breaks ties within a millisecond in insertion order (ids are random after the time).
const NEWEST = 'ORDER BY created_at DESC, rowid DESC';

export function transactionRepo(db: Db): TransactionRepo {
  return {
    async insert(t) {
      const row = transactionToRow(t);
      db.run(insertSql('transactions', row), row);
    },
    async get(environmentId, id) {
      const r = db.get<TransactionRow>('SELECT * FROM transactions WHERE environment_id = ? AND id = ?', environmentId, id);
      return r ? transactionFromRow(r) : null;
    },
    async findByThirdPartyId(environmentId, type, thirdPartyId) {
      const r = db.get<TransactionRow>(
        'SELECT * FROM transactions WHERE environment_id = ? AND type = ? AND third_party_id = ?',
        environmentId,
        type,
        thirdPartyId,
      );
      return r ? transactionFromRow(r) : null;
    },
    async updateStatus(environmentId, id, from, to, completedAt, extra) {
      // A null completedAt keeps the recorded one; a refund email is only ever added.
      const result = db.run(
        `UPDATE transactions
            SET status = ?, completed_at = COALESCE(?, completed_at), refund_email = COALESCE(?, refund_email)
          WHERE environment_id = ? AND id = ? AND status = ?`,
        to,
        completedAt,
        extra?.refundEmail ?? null,
        environmentId,
        id,
        from,
      );
      return result.changes > 0;
    },
    async listByUser(environmentId, userId, { transactionId, limit, cursor }) {
      assertLimit(limit);
      const where = ['environment_id = ?', 'user_id = ?'];
      const params: unknown[] = [environmentId, userId];
      if (transactionId !== undefined) {
        where.push('id = ?');
        params.push(transactionId);
      }
      if (cursor !== null) {
        // The cursor is the rowid of the last row shown; it must be a row of this user's list.
        const seq = decodeCursor(cursor);
        const last = db.get<{ created_at: number }>('SELECT created_at FROM transactions WHERE rowid = ? AND environment_id = ? AND user_id = ?', seq, environmentId, userId);
        if (!last) throw new InvalidCursorError(cursor);
        where.push('(created_at < ? OR (created_at = ? AND rowid < ?))');
        params.push(last.created_at, last.created_at, seq);
      }
      const rows = db.all<TransactionRow & { seq: number }>(`SELECT rowid AS seq, * FROM transactions WHERE ${where.join(' AND ')} ${NEWEST} LIMIT ?`, ...params, limit + 1);
      return pageOf(rows, limit, (r) => r.seq, transactionFromRow);
    },
    async search(environmentId, q) {
      const where: string[] = ['environment_id = ?'];
      const params: unknown[] = [environmentId];
      if (q.orderNumber !== undefined) {
        where.push('order_number = ?');
        params.push(q.orderNumber);
      }
      if (q.txHash !== undefined) {
        where.push('tx_hash = ?');
        params.push(q.txHash);
      }
      if (params.length === 1) return null;
      const r = db.get<TransactionRow>(`SELECT * FROM transactions WHERE ${where.join(' AND ')} ${NEWEST} LIMIT 1`, ...params);
      return r ? transactionFromRow(r) : null;
    },
    async listByOrder(environmentId, orderId) {
      // Oldest first: the order's payments in the sequence they happened.
      const rows = db.all<TransactionRow>(
        'SELECT * FROM transactions WHERE environment_id = ? AND order_id = ? ORDER BY created_at, rowid',
        environmentId,
        orderId,
      );
      return rows.map(transactionFromRow);
    },
  };
}
