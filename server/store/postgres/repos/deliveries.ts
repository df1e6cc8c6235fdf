import { assertLimit, decodeCursor, pageOf } from '../../cursor.ts';
import type { DeliveryRepo } from '../../types.ts';
import type { Conn } from '../db.ts';
import { attemptFromRow, deliveryFromRow, deliveryToRow, type AttemptRow, type DeliveryRow } from '../rows.ts';

/** `ready` is called when a write may have made deliveries due; the store turns it into one notification on commit. */
export function deliveryRepo(db: Conn, ready: () => void): DeliveryRepo {
  return {
    async insert(d) {
      await db.insert('deliveries', deliveryToRow(d));
      if (d.state === 'pending') ready();
    },
    async get(environmentId, id) {
      const r = await db.one<DeliveryRow>('SELECT * FROM deliveries WHERE environment_id = $1 AND id = $2', [environmentId, id]);
      return r ? deliveryFromRow(r) : null;
    },
    async list(environmentId, { q, limit, cursor }) {
      assertLimit(limit);
      const before = cursor === null ? null : decodeCursor(cursor);
      const where = ['environment_id = $1'];
      const params: unknown[] = [environmentId];
      if (q !== null) {
        // A union of three index lookups, as on SQLite: an OR could lead the planner to walk
        // the environment's deliveries newest first looking for matches.
        params.push(q);
        const p = `$${params.length}`;
        where.push(`seq IN (SELECT seq FROM deliveries WHERE environment_id = $1 AND order_id = ${p}
                     UNION ALL SELECT seq FROM deliveries WHERE environment_id = $1 AND merchant_reference = ${p}
                     UNION ALL SELECT seq FROM deliveries WHERE event_id = ${p})`);
      }
      if (before !== null) {
        params.push(before);
        where.push(`seq < $${params.length}`);
      }
      params.push(limit + 1);
      const rows = await db.rows<DeliveryRow & { seq: number }>(
        `SELECT * FROM deliveries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $${params.length}`,
        params,
      );
      return pageOf(rows, limit, (r) => r.seq, deliveryFromRow);
    },
    async attempts(deliveryId) {
      const rows = await db.rows<AttemptRow>('SELECT * FROM delivery_attempts WHERE delivery_id = $1 ORDER BY cycle, number', [deliveryId]);
      return rows.map(attemptFromRow);
    },
    async disableOlderVersions(endpointId, version, now) {
      // A lease, if any, stays: the worker holding it may still store its attempt (complete
      // keeps the disabled state).
      return db.run(
        `UPDATE deliveries SET state = 'disabled', next_attempt_at = NULL, updated_at = $3
          WHERE endpoint_id = $1 AND state = 'pending' AND endpoint_version < $2`,
        [endpointId, version, now],
      );
    },
    async restart(d) {
      const changed =
        (await db.run(
          `UPDATE deliveries
              SET state = 'pending', attempt_count = 0, cycle = cycle + 1, next_attempt_at = $3,
                  endpoint_id = $4, endpoint_version = $5, url = $6,
                  lease_owner = NULL, lease_expires_at = NULL, delivered_at = NULL, updated_at = $3
            WHERE environment_id = $1 AND id = $2 AND state = 'failed'`,
          [d.environmentId, d.id, d.now, d.endpointId, d.endpointVersion, d.url],
        )) > 0;
      if (changed) ready();
      return changed;
    },
  };
}
