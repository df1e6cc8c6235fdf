import type { Sql } from '../sql.ts';
import type { DeliveryRepo } from '../../domain/store.ts';
import type { DialectHooks } from './hooks.ts';
import { all, bind, getter, seqPage } from './query.ts';
import { fanOutDeliveryId } from '../fan-out.ts';

/** `ready` is called when a write may have made deliveries due; the store turns it into one wake-up on commit. */
export function deliveryRepo<B, J>(
  sql: Sql<B, J>,
  { insertWithEvent }: Pick<DialectHooks, 'insertWithEvent'>,
  ready: () => void,
  eventsRecorded: (environmentId: string) => void,
): DeliveryRepo {
  const m = sql.map;
  return {
    async insert(d) {
      // A lease is the queue's to give (claim): a new delivery has none.
      if (d.leaseOwner !== null || d.leaseExpiresAt !== null) throw new Error(`delivery ${d.id}: a new delivery has no lease`);
      await sql.insert('deliveries', m.deliveryToRow(d));
      if (d.state === 'pending') ready();
    },
    async insertWithEvent(event, d, newOrder) {
      // The fan-out (fan-out.ts): every active endpoint whose types include the event's, ranked by id.
      const endpointsOf = `SELECT id, version, url, row_number() OVER (ORDER BY id) AS rank FROM webhook_endpoints
                            WHERE environment_id = $1 AND active = ${sql.true} AND ${sql.receives('event_types', '$2')}`;
      let inserted: boolean;
      if (insertWithEvent !== undefined) {
        inserted = await insertWithEvent(endpointsOf, event, d, newOrder);
      } else {
        if (newOrder !== undefined) await sql.insert('orders', m.orderToRow(newOrder));
        await sql.insert('events', m.eventToRow(event));
        const eps = await sql.rows<{ id: string; version: number; url: string; rank: number }>(endpointsOf, [event.environmentId, event.type]);
        for (const ep of eps) {
          const id = fanOutDeliveryId(d.id, ep.id, Number(ep.rank));
          await sql.insert('deliveries', m.deliveryToRow({ ...d, id, endpointId: ep.id, endpointVersion: ep.version, url: ep.url }));
        }
        inserted = eps.length > 0;
      }
      eventsRecorded(event.environmentId);
      if (inserted && d.state === 'pending') ready();
      return inserted;
    },
    get: getter(sql, 'delivery_records', m.deliveryFromRow),
    async list(environmentId, { q, limit, cursor, endpointId }) {
      const where = ['environment_id = $1'];
      const params: unknown[] = [environmentId];
      // One endpoint's activity: the environment's deliveries newest first, filtered (at most 16 endpoints share them).
      if (endpointId !== undefined && endpointId !== null) where.push(`endpoint_id = ${bind(params, endpointId)}`);
      if (q !== null) {
        // A union of three index lookups: a plain OR could scan (or lead the planner to walk)
        // the environment's deliveries newest first looking for matches.
        const p = bind(params, q);
        where.push(`seq IN (SELECT seq FROM deliveries WHERE environment_id = $1 AND order_id = ${p}
                     UNION ALL SELECT seq FROM deliveries WHERE environment_id = $1 AND merchant_reference = ${p}
                     UNION ALL SELECT seq FROM deliveries WHERE event_id = ${p})`);
      }
      return seqPage(sql, 'delivery_records', m.deliveryFromRow, where, params, { limit, cursor });
    },
    async attempts(deliveryId) {
      return all(sql, m.attemptFromRow, 'SELECT * FROM delivery_attempts WHERE delivery_id = $1 ORDER BY cycle, number', [deliveryId]);
    },
    async disableOlderVersions(endpointId, version, now) {
      // A lease, if any, stays: the worker holding it may still store its attempt (complete
      // keeps the disabled state).
      return sql.run(
        `UPDATE deliveries SET state = 'disabled', next_attempt_at = NULL, updated_at = $3
          WHERE endpoint_id = $1 AND state = 'pending' AND endpoint_version < $2`,
        [endpointId, version, now],
      );
    },
    async restart(d) {
      // A failed or delivered delivery holds no lease: the completion that ended its cycle gave it back.
      const changed =
        (await sql.run(
          `UPDATE deliveries
              SET state = 'pending', attempt_count = 0, cycle = cycle + 1, next_attempt_at = $7,
                  endpoint_id = $4, endpoint_version = $5, url = $6,
                  delivered_at = NULL, updated_at = $3
            WHERE environment_id = $1 AND id = $2 AND (state = 'failed' OR ($8 = 1 AND state = 'delivered'))`,
          [d.environmentId, d.id, d.now, d.endpointId, d.endpointVersion, d.url, d.dueAt ?? d.now, d.delivered === true ? 1 : 0],
        )) > 0;
      if (changed) ready();
      return changed;
    },
    async recoverable(environmentId, q) {
      // The environment's deliveries in seq (creation) order; a recovery is rare and bounded.
      const params: unknown[] = [environmentId, q.endpointId, q.since, q.until, q.delivered ? 1 : 0, q.limit];
      // Only the types the endpoint receives now (one event looked up by its id per delivery).
      const typed =
        q.eventTypes === null ? '' : `AND EXISTS (SELECT 1 FROM events e WHERE e.id = delivery_records.event_id AND ${sql.anyOf('e.type', q.eventTypes, params)})`;
      return all(
        sql,
        m.deliveryFromRow,
        `SELECT * FROM delivery_records
          WHERE environment_id = $1 AND endpoint_id = $2 AND kind = 'order_event' AND created_at >= $3 AND created_at < $4
            AND (state = 'failed' OR ($5 = 1 AND state = 'delivered')) ${typed}
          ORDER BY seq LIMIT $6`,
        params,
      );
    },
  };
}
