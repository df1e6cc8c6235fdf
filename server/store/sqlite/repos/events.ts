import { assertLimit, decodeCursor, pageOf } from '../../cursor.ts';
import type { EventRepo } from '../../types.ts';
import type { Db } from '../db.ts';
import { eventFromRow, eventToRow, insertSql, type EventRow } from '../rows.ts';

export function eventRepo(db: Db): EventRepo {
  return {
    async insert(e) {
      const row = eventToRow(e);
      db.run(insertSql('events', row), row);
    },
    async get(environmentId, id) {
      const r = db.get<EventRow>('SELECT * FROM events WHERE environment_id = ? AND id = ?', environmentId, id);
      return r ? eventFromRow(r) : null;
    },
    async list(environmentId, { types, limit, cursor }) {
      assertLimit(limit);
      const before = cursor === null ? null : decodeCursor(cursor);
      const where = ['environment_id = ?'];
      const params: unknown[] = [environmentId];
      // An empty `types` means every type.
      if (types.length > 0) {
        where.push(`type IN (${types.map(() => '?').join(', ')})`);
        params.push(...types);
      }
      if (before !== null) {
        where.push('seq < ?');
        params.push(before);
      }
      const rows = db.all<EventRow>(`SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`, ...params, limit + 1);
      return pageOf(rows, limit, (r) => r.seq, eventFromRow);
    },
  };
}
