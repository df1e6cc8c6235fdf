import type { Sql } from '../sql.ts';
import type { EventRepo } from '../types.ts';
import { first, seqPage } from './query.ts';

export function eventRepo<B, J>(sql: Sql<B, J>): EventRepo {
  const m = sql.map;
  return {
    async insert(e) {
      await sql.insert('events', m.eventToRow(e));
    },
    async get(environmentId, id) {
      return first(sql, m.eventFromRow, 'SELECT * FROM events WHERE environment_id = $1 AND id = $2', [environmentId, id]);
    },
    async list(environmentId, { types, limit, cursor }) {
      const where = ['environment_id = $1'];
      const params: unknown[] = [environmentId];
      // An empty `types` means every type.
      if (types.length > 0) where.push(sql.anyOf('type', types, params));
      return seqPage(sql, 'events', m.eventFromRow, where, params, { limit, cursor });
    },
  };
}
