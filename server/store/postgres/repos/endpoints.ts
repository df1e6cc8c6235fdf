import type { EndpointRepo } from '../../types.ts';
import type { Conn } from '../db.ts';
import { endpointFromRow, endpointToRow, type EndpointRow } from '../rows.ts';

export function endpointRepo(db: Conn): EndpointRepo {
  return {
    async insert(e) {
      await db.insert('webhook_endpoints', endpointToRow(e));
    },
    async get(environmentId, id) {
      const r = await db.one<EndpointRow>('SELECT * FROM webhook_endpoints WHERE environment_id = $1 AND id = $2', [environmentId, id]);
      return r ? endpointFromRow(r) : null;
    },
    async getActive(environmentId) {
      const r = await db.one<EndpointRow>('SELECT * FROM webhook_endpoints WHERE environment_id = $1 AND active', [environmentId]);
      return r ? endpointFromRow(r) : null;
    },
    async list(environmentId) {
      const rows = await db.rows<EndpointRow>('SELECT * FROM webhook_endpoints WHERE environment_id = $1 ORDER BY created_at DESC, seq DESC', [
        environmentId,
      ]);
      return rows.map(endpointFromRow);
    },
    async update(e) {
      // Activating one while another is active breaks the same rule as inserting it: guarded,
      // so a caller may catch the violation and go on.
      const r = endpointToRow(e);
      await db.guarded(() =>
        db.run(
          `UPDATE webhook_endpoints
              SET url = $3, secret_enc = $4, active = $5, version = $6, last_test_delivery_id = $7, updated_at = $8, disabled_at = $9
            WHERE environment_id = $1 AND id = $2`,
          [r.environment_id, r.id, r.url, r.secret_enc, r.active, r.version, r.last_test_delivery_id, r.updated_at, r.disabled_at],
        ),
      );
    },
  };
}
