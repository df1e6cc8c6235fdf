import type { Sql } from '../sql.ts';
import type { TenantRepo } from '../../domain/store.ts';
import { first, inserter } from './query.ts';

/** `adjustWallet` is the dialect's own: PostgreSQL adds in one guarded UPDATE, SQLite in exact decimals under its write lock. */
export function tenantRepo<B, J>(sql: Sql<B, J>, adjustWallet: TenantRepo['adjustWallet']): TenantRepo {
  const m = sql.map;
  return {
    insertTenant: inserter(sql, 'tenants', m.tenantToRow),
    async getTenant(id) {
      return first(sql, m.tenantFromRow, 'SELECT * FROM tenants WHERE id = $1', [id]);
    },
    insertEnvironment: inserter(sql, 'environments', m.environmentToRow),
    async getEnvironment(id) {
      return first(sql, m.environmentFromRow, 'SELECT * FROM environments WHERE id = $1', [id]);
    },
    async findEnvironment(tenantId, name) {
      return first(sql, m.environmentFromRow, 'SELECT * FROM environments WHERE tenant_id = $1 AND name = $2', [tenantId, name]);
    },
    adjustWallet,
    async setCallbackSecret(environmentId, secretEnc) {
      await sql.run('UPDATE environments SET callback_secret_enc = $2 WHERE id = $1', [environmentId, secretEnc]);
    },
    insertApiKey: inserter(sql, 'api_keys', m.apiKeyToRow),
    async getApiKey(id) {
      return first(sql, m.apiKeyFromRow, 'SELECT * FROM api_keys WHERE id = $1', [id]);
    },
    async revokeApiKey(id, tenantId, at) {
      return (await sql.run('UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND tenant_id = $2 AND revoked_at IS NULL', [id, tenantId, at])) > 0;
    },
    insertMember: inserter(sql, 'members', m.memberToRow),
    async getMemberByTokenHash(tokenHash) {
      return first(sql, m.memberFromRow, 'SELECT * FROM members WHERE token_hash = $1', [tokenHash]);
    },
    async setMemberActive(memberId, tenantId, active) {
      return (await sql.run('UPDATE members SET active = $3 WHERE id = $1 AND tenant_id = $2', [memberId, tenantId, m.bool(active)])) > 0;
    },
    async endMemberSessions(memberId, tenantId) {
      return (await sql.run('UPDATE members SET session_epoch = session_epoch + 1 WHERE id = $1 AND tenant_id = $2', [memberId, tenantId])) > 0;
    },
    insertServiceAccount: inserter(sql, 'service_accounts', m.serviceAccountToRow),
    async getMember(memberId) {
      return first(sql, m.memberFromRow, 'SELECT * FROM members WHERE id = $1', [memberId]);
    },
    async findServiceAccount(tenantId, email) {
      return first(sql, m.serviceAccountFromRow, 'SELECT * FROM service_accounts WHERE tenant_id = $1 AND email = $2', [tenantId, email]);
    },
  };
}
