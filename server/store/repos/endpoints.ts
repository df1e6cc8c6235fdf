import type { Sql } from '../sql.ts';
import type { EndpointRepo } from '../../domain/store.ts';
import { all, first, getter, inserter } from './query.ts';

/** `insertionOrder` is the dialect's column of insertion order (DialectHooks). */
export function endpointRepo<B, J>(sql: Sql<B, J>, insertionOrder: string): EndpointRepo {
  const m = sql.map;
  return {
    insert: inserter(sql, 'webhook_endpoints', m.endpointToRow),
    get: getter(sql, 'webhook_endpoints', m.endpointFromRow),
    async getActive(environmentId) {
      return first(sql, m.endpointFromRow, `SELECT * FROM webhook_endpoints WHERE environment_id = $1 AND active = ${sql.true}`, [environmentId]);
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
                  signature_scheme = $10
            WHERE environment_id = $1 AND id = $2`,
          [r.environment_id, r.id, r.url, r.secret_enc, r.active, r.version, r.last_test_delivery_id, r.updated_at, r.disabled_at, r.signature_scheme],
        ),
      );
    },
  };
}
