import type { Sql } from '../sql.ts';
import type { EventRepo } from '../../domain/store.ts';
import { streamAfter, streamHead } from './event-stream.ts';
import { getter, inserter, seqPage } from './query.ts';

export function eventRepo<B, J>(sql: Sql<B, J>, eventsRecorded: (environmentId: string) => void): EventRepo {
  const m = sql.map;
  const insert = inserter(sql, 'events', m.eventToRow);
  return {
    async insert(e) {
      await insert(e);
      eventsRecorded(e.environmentId);
    },
    get: getter(sql, 'events', m.eventFromRow),
    async list(environmentId, { types, limit, cursor }) {
      const where = ['environment_id = $1'];
      const params: unknown[] = [environmentId];
      // An empty `types` means every type.
      if (types.length > 0) where.push(sql.anyOf('type', types, params));
      return seqPage(sql, 'events', m.eventFromRow, where, params, { limit, cursor });
    },
    streamHead: (environmentId) => streamHead(sql as Sql<unknown, unknown>, environmentId),
    streamAfter: (environmentId, opts) => streamAfter(sql as Sql<unknown, unknown>, m.eventFromRow, environmentId, opts),
  };
}
