import type { EndpointRepo } from '../../types.ts';
import type { Db } from '../db.ts';
import { endpointFromRow, endpointToRow, insertSql, type EndpointRow } from '../rows.ts';

export function endpointRepo(db: Db): EndpointRepo {
  return {
    async insert(e) {
      const row = endpointToRow(e);
      db.run(insertSql('webhook_endpoints', row), row);
    },
    async get(environmentId, id) {
      const r = db.get<EndpointRow>('SELECT * FROM webhook_endpoints WHERE environment_id = ? AND id = ?', environmentId, id);
      return r ? endpointFromRow(r) : null;
    },
    async getActive(environmentId) {
      const r = db.get<EndpointRow>('SELECT * FROM webhook_endpoints WHERE environment_id = ? AND active = 1', environmentId);
      return r ? endpointFromRow(r) : null;
    },
    async list(environmentId) {
      const rows = db.all<EndpointRow>('SELECT * FROM webhook_endpoints WHERE environment_id = ? ORDER BY created_at DESC, rowid DESC', environmentId);
      return rows.map(endpointFromRow);
    },
    async update(e) {
      // Activating one while another is active breaks the same rule as inserting it.
      db.run(
        `UPDATE webhook_endpoints
            SET url = @url, secret_enc = @secret_enc, active = @active, version = @version,
                last_test_delivery_id = @last_test_delivery_id, updated_at = @updated_at, disabled_at = @disabled_at
          WHERE environment_id = @environment_id AND id = @id`,
        endpointToRow(e),
      );
    },
  };
}
