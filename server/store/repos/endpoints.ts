import type { Sql } from '../sql.ts';
import type { EndpointRepo } from '../../domain/store.ts';
import { all, getter, inserter } from './query.ts';
import type { EndpointRow } from '../rows.ts';

/** `insertionOrder` is the dialect's column of insertion order (DialectHooks). */
export function endpointRepo<B, J>(sql: Sql<B, J>, insertionOrder: string): EndpointRepo {
  const m = sql.map;
  const insert = inserter(sql, 'webhook_endpoints', m.endpointToRow);
  return {
    insert,
    async insertWithin(e, maxActive) {
      // An update of the environment's row holds it (PostgreSQL's row lock; SQLite has one
      // writer anyway) until the transaction ends, so two creations count one after the other.
      await sql.run('UPDATE environments SET id = id WHERE id = $1', [e.environmentId]);
      const active = await sql.one<{ n: number | string }>(`SELECT count(*) AS n FROM webhook_endpoints WHERE environment_id = $1 AND active = ${sql.true}`, [e.environmentId]);
      if (Number(active?.n ?? 0) >= maxActive) return false;
      await insert(e);
      return true;
    },
    get: getter(sql, 'webhook_endpoints', m.endpointFromRow),
    async getHeld(environmentId, id) {
      // The update takes the row lock (and waits for a writer holding it); the read after it sees that writer's commit.
      await sql.run('UPDATE webhook_endpoints SET id = id WHERE environment_id = $1 AND id = $2', [environmentId, id]);
      const row = await sql.one<EndpointRow<B>>('SELECT * FROM webhook_endpoints WHERE environment_id = $1 AND id = $2', [environmentId, id]);
      return row ? m.endpointFromRow(row) : null;
    },
    async listActive(environmentId) {
      return all(
        sql,
        m.endpointFromRow,
        `SELECT * FROM webhook_endpoints WHERE environment_id = $1 AND active = ${sql.true} ORDER BY created_at DESC, ${insertionOrder} DESC`,
        [environmentId],
      );
    },
    async list(environmentId) {
      return all(
        sql,
        m.endpointFromRow,
        `SELECT * FROM webhook_endpoints WHERE environment_id = $1 ORDER BY created_at DESC, ${insertionOrder} DESC`,
        [environmentId],
      );
    },
    async update(e) {
      // Activating one while another is active breaks the same rule as inserting it: guarded,
      // so a caller may catch the violation and go on.
      const r = m.endpointToRow(e);
      await sql.guarded(() =>
        sql.run(
          `UPDATE webhook_endpoints
              SET url = $3, secret_enc = $4, active = $5, version = $6, last_test_delivery_id = $7, updated_at = $8, disabled_at = $9,
                  signature_scheme = $10, event_types = $11, disabled_reason = $12, failing_since = $13,
                  consecutive_failures = $14, failing_notified_at = $15, max_per_second = $16
            WHERE environment_id = $1 AND id = $2`,
          [
            ...[r.environment_id, r.id, r.url, r.secret_enc, r.active, r.version, r.last_test_delivery_id, r.updated_at, r.disabled_at, r.signature_scheme, r.event_types],
            ...[r.disabled_reason, r.failing_since, r.consecutive_failures, r.failing_notified_at, r.max_per_second],
          ],
        ),
      );
    },
  };
}
