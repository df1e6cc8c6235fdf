import type { Sql } from '../sql.ts';
import type { EventRepo } from '../types.ts';
import { getter, inserter, seqPage } from './query.ts';

export function eventRepo<B, J>(sql: Sql<B, J>): EventRepo {
  const m = sql.map;
  return {
    insert: inserter(sql, 'events', m.eventToRow),
    get: getter(sql, 'events', m.eventFromRow),
    async list(environmentId, { types, limit, cursor }) {
      const where = ['environment_id = $1'];
      const params: unknown[] = [environmentId];
      // An empty `types` means every type.
      if (types.length > 0) where.push(sql.anyOf('type', types, params));
      return seqPage(sql, 'events', m.eventFromRow, where, params, { limit, cursor });
    },
  };
}
