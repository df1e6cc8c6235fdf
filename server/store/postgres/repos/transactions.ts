import { assertLimit, decodeCursor, pageOf } from '../../cursor.ts';
import { InvalidCursorError } from '../../errors.ts';
import type { TransactionRepo } from '../../types.ts';
import type { Conn } from '../db.ts';
import { transactionFromRow, transactionToRow, type TransactionRow } from '../rows.ts';

// Newest first; seq (insertion order, like SQLite's rowid) breaks ties within a millisecond.
const NEWEST = 'ORDER BY created_at DESC, seq DESC';

export function transactionRepo(db: Conn): TransactionRepo {
  return {
    async insert(t) {
      await db.insert('transactions', transactionToRow(t));
    },
    async get(environmentId, id) {
      const r = await db.one<TransactionRow>('SELECT * FROM transactions WHERE environment_id = $1 AND id = $2', [environmentId, id]);
      return r ? transactionFromRow(r) : null;
    },
    async findByThirdPartyId(environmentId, type, thirdPartyId) {
      const r = await db.one<TransactionRow>('SELECT * FROM transactions WHERE environment_id = $1 AND type = $2 AND third_party_id = $3', [
        environmentId,
        type,
        thirdPartyId,
      ]);
      return r ? transactionFromRow(r) : null;
    },
    async updateStatus(environmentId, id, from, to, completedAt, extra) {
      // A null completedAt keeps the recorded one; a refund email is only ever added.
      const changed = await db.run(
        `UPDATE transactions
            SET status = $4, completed_at = COALESCE($5::bigint, completed_at), refund_email = COALESCE($6::text, refund_email)
          WHERE environment_id = $1 AND id = $2 AND status = $3`,
        [environmentId, id, from, to, completedAt, extra?.refundEmail ?? null],
      );
      return changed > 0;
    },
    async listByUser(environmentId, userId, { transactionId, limit, cursor }) {
      assertLimit(limit);
      const where = ['environment_id = $1', 'user_id = $2'];
      const params: unknown[] = [environmentId, userId];
      if (transactionId !== undefined) {
        params.push(transactionId);
        where.push(`id = $${params.length}`);
      }
      if (cursor !== null) {
        // The cursor is the seq of the last row shown; it must be a row of this user's list.
        const seq = decodeCursor(cursor);
        const last = await db.one<{ created_at: number }>('SELECT created_at FROM transactions WHERE seq = $1 AND environment_id = $2 AND user_id = $3', [seq, environmentId, userId]);
        if (!last) throw new InvalidCursorError(cursor);
        params.push(last.created_at, seq);
        where.push(`(created_at, seq) < ($${params.length - 1}, $${params.length})`);
      }
      params.push(limit + 1);
      const rows = await db.rows<TransactionRow & { seq: number }>(`SELECT * FROM transactions WHERE ${where.join(' AND ')} ${NEWEST} LIMIT $${params.length}`, params);
      return pageOf(rows, limit, (r) => Number(r.seq), transactionFromRow);
    },
    async search(environmentId, q) {
      const where: string[] = ['environment_id = $1'];
      const params: unknown[] = [environmentId];
      if (q.orderNumber !== undefined) {
        params.push(q.orderNumber);
        where.push(`order_number = $${params.length}`);
      }
      if (q.txHash !== undefined) {
        params.push(q.txHash);
        where.push(`tx_hash = $${params.length}`);
      }
      if (params.length === 1) return null;
      const r = await db.one<TransactionRow>(`SELECT * FROM transactions WHERE ${where.join(' AND ')} ${NEWEST} LIMIT 1`, params);
      return r ? transactionFromRow(r) : null;
    },
    async listByOrder(environmentId, orderId) {
      // Oldest first: the order's payments in the sequence they happened.
      const rows = await db.rows<TransactionRow>('SELECT * FROM transactions WHERE environment_id = $1 AND order_id = $2 ORDER BY created_at, seq', [
        environmentId,
        orderId,
      ]);
      return rows.map(transactionFromRow);
    },
  };
}
