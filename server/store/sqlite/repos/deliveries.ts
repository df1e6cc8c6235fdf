import { assertLimit, decodeCursor, pageOf } from '../../cursor.ts';
import type { DeliveryRepo } from '../../types.ts';
import type { Db } from '../db.ts';
import { attemptFromRow, deliveryFromRow, deliveryToRow, insertSql, type AttemptRow, type DeliveryRow } from '../rows.ts';

/** `ready` is called when a write may have made deliveries due; the store turns it into one notification after commit. */
export function deliveryRepo(db: Db, ready: () => void): DeliveryRepo {
  return {
    async insert(d) {
      const row = deliveryToRow(d);
      db.run(insertSql('deliveries', row), row);
      if (d.state === 'pending') ready();
    },
    async get(environmentId, id) {
      const r = db.get<DeliveryRow>('SELECT * FROM deliveries WHERE environment_id = ? AND id = ?', environmentId, id);
      return r ? deliveryFromRow(r) : null;
    },
    async list(environmentId, { q, limit, cursor }) {
      assertLimit(limit);
      const before = cursor === null ? null : decodeCursor(cursor);
      const where = ['environment_id = ?'];
      const params: unknown[] = [environmentId];
      if (q !== null) {
        // A union of three index lookups; a plain OR would scan the environment's deliveries.
        where.push(`seq IN (SELECT seq FROM deliveries WHERE environment_id = ? AND order_id = ?
                     UNION ALL SELECT seq FROM deliveries WHERE environment_id = ? AND merchant_reference = ?
                     UNION ALL SELECT seq FROM deliveries WHERE event_id = ?)`);
        params.push(environmentId, q, environmentId, q, q);
      }
      if (before !== null) {
        where.push('seq < ?');
        params.push(before);
      }
      const rows = db.all<DeliveryRow>(`SELECT * FROM deliveries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`, ...params, limit + 1);
      return pageOf(rows, limit, (r) => r.seq, deliveryFromRow);
    },
    async attempts(deliveryId) {
      const rows = db.all<AttemptRow>('SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY cycle, number', deliveryId);
      return rows.map(attemptFromRow);
    },
    async disableOlderVersions(endpointId, version, now) {
      // A lease, if any, stays: the worker holding it may still store its attempt (complete
      // keeps the disabled state).
      return db.run(
        `UPDATE deliveries SET state = 'disabled', next_attempt_at = NULL, updated_at = ?
          WHERE endpoint_id = ? AND state = 'pending' AND endpoint_version < ?`,
        now,
        endpointId,
        version,
      ).changes;
    },
    async restart(d) {
      const changed =
        db.run(
          `UPDATE deliveries
              SET state = 'pending', attempt_count = 0, cycle = cycle + 1, next_attempt_at = @now,
                  endpoint_id = @endpointId, endpoint_version = @endpointVersion, url = @url,
                  lease_owner = NULL, lease_expires_at = NULL, delivered_at = NULL, updated_at = @now
            WHERE environment_id = @environmentId AND id = @id AND state = 'failed'`,
          d,
        ).changes > 0;
      if (changed) ready();
      return changed;
    },
  };
}
