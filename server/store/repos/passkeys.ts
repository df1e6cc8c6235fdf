import type { Sql } from '../sql.ts';
import type { PasskeyRepo } from '../../domain/store.ts';
import { all, first, inserter } from './query.ts';

export function passkeyRepo<B, J>(sql: Sql<B, J>): PasskeyRepo {
  const m = sql.map;
  return {
    insert: inserter(sql, 'member_passkeys', m.passkeyToRow),
    async getByCredentialId(credentialId) {
      return first(sql, m.passkeyFromRow, 'SELECT * FROM member_passkeys WHERE credential_id = $1', [credentialId]);
    },
    async listByMember(memberId) {
      return all(sql, m.passkeyFromRow, 'SELECT * FROM member_passkeys WHERE member_id = $1 ORDER BY created_at, id', [memberId]);
    },
    async recordUse(id, use) {
      const changed = await sql.run(
        'UPDATE member_passkeys SET counter = $3, backed_up = $4, last_used_at = $5 WHERE id = $1 AND counter = $2',
        [id, use.seenCounter, use.counter, m.bool(use.backedUp), use.at],
      );
      return changed > 0;
    },
    async remove(id, memberId) {
      return (await sql.run('DELETE FROM member_passkeys WHERE id = $1 AND member_id = $2', [id, memberId])) > 0;
    },
    async removeAllOfMember(memberId) {
      return sql.run('DELETE FROM member_passkeys WHERE member_id = $1', [memberId]);
    },
  };
}
