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
    async listByUser(environmentId, userId, opts) {
      const rows =
        opts.transactionId === undefined
          ? db.all<TransactionRow>(`SELECT * FROM transactions WHERE environment_id = ? AND user_id = ? ${NEWEST} LIMIT ?`, environmentId, userId, opts.limit)
          : db.all<TransactionRow>(
              `SELECT * FROM transactions WHERE environment_id = ? AND user_id = ? AND id = ? ${NEWEST} LIMIT ?`,
              environmentId,
              userId,
              opts.transactionId,
              opts.limit,
            );
      return rows.map(transactionFromRow);
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
