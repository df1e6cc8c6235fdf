import type { Sql } from '../sql.ts';
import type { EventRepo } from '../../domain/store.ts';
import { streamAfter, streamHead } from './event-stream.ts';
import { all, getter, inserter, seqPage } from './query.ts';

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
    async missed(environmentId, q) {
      const params: unknown[] = [environmentId, q.since, q.until, q.missedBy, q.to, q.limit];
      // Rare and bounded (a recovery request): the environment's events by time, each looked up
      // in the deliveries by its event id.
      return all(
        sql,
        m.eventFromRow,
        `SELECT * FROM events e
          WHERE e.environment_id = $1 AND e.created_at >= $2 AND e.created_at < $3 AND ${sql.anyOf('e.type', q.types, params)}
            AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.endpoint_id = $4 AND d.state = 'delivered')
            AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.endpoint_id = $5)
          ORDER BY e.created_at, e.seq LIMIT $6`,
        params,
      );
    },
    streamHead: (environmentId) => streamHead(sql as Sql<unknown, unknown>, environmentId),
    streamAfter: (environmentId, opts) => streamAfter(sql as Sql<unknown, unknown>, m.eventFromRow, environmentId, opts),
  };
}
