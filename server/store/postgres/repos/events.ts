import { assertLimit, decodeCursor, pageOf } from '../../cursor.ts';
import type { EventRepo } from '../../types.ts';
import type { Conn } from '../db.ts';
import { eventFromRow, eventToRow, type EventRow } from '../rows.ts';

export function eventRepo(db: Conn): EventRepo {
  return {
    async insert(e) {
      await db.insert('events', eventToRow(e));
    },
    async get(environmentId, id) {
      const r = await db.one<EventRow>('SELECT * FROM events WHERE environment_id = $1 AND id = $2', [environmentId, id]);
      return r ? eventFromRow(r) : null;
    },
    async list(environmentId, { types, limit, cursor }) {
      assertLimit(limit);
      const before = cursor === null ? null : decodeCursor(cursor);
      const where = ['environment_id = $1'];
      const params: unknown[] = [environmentId];
      // An empty `types` means every type.
      if (types.length > 0) {
        params.push([...types]);
        where.push(`type = ANY($${params.length}::text[])`);
      }
      if (before !== null) {
        params.push(before);
        where.push(`seq < $${params.length}`);
      }
      params.push(limit + 1);
      const rows = await db.rows<EventRow & { seq: number }>(
        `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $${params.length}`,
        params,
      );
      return pageOf(rows, limit, (r) => r.seq, eventFromRow);
    },
  };
}
