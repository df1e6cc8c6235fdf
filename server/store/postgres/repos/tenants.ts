import type { TenantRepo } from '../../types.ts';
import { assertDecimal8, shortDecimal, type Conn } from '../db.ts';
import {
  apiKeyFromRow,
  apiKeyToRow,
  environmentFromRow,
  environmentToRow,
  memberFromRow,
  memberToRow,
  serviceAccountFromRow,
  serviceAccountToRow,
  tenantFromRow,
  tenantToRow,
  type ApiKeyRow,
  type EnvironmentRow,
  type MemberRow,
  type ServiceAccountRow,
  type TenantRow,
} from '../rows.ts';

export function tenantRepo(db: Conn): TenantRepo {
  return {
    async insertTenant(t) {
      await db.insert('tenants', tenantToRow(t));
    },
    async getTenant(id) {
      const r = await db.one<TenantRow>('SELECT * FROM tenants WHERE id = $1', [id]);
      return r ? tenantFromRow(r) : null;
    },
    async insertEnvironment(e) {
      await db.insert('environments', environmentToRow(e));
    },
    async getEnvironment(id) {
      const r = await db.one<EnvironmentRow>('SELECT * FROM environments WHERE id = $1', [id]);
      return r ? environmentFromRow(r) : null;
    },
    async findEnvironment(tenantId, name) {
      const r = await db.one<EnvironmentRow>('SELECT * FROM environments WHERE tenant_id = $1 AND name = $2', [tenantId, name]);
      return r ? environmentFromRow(r) : null;
    },
    async adjustWallet(environmentId, delta) {
      // One guarded UPDATE: the row lock orders concurrent debits (from any instance) and the
      // guard is evaluated on the latest balance, so the wallet never goes below zero. NUMERIC
      // arithmetic is exact; delta is checked to have at most the column's 8 places.
      const r = await db.one<{ balance: string }>(
        `UPDATE environments SET wallet_balance = wallet_balance + $2::numeric
          WHERE id = $1 AND wallet_balance + $2::numeric >= 0
        RETURNING wallet_balance::text AS balance`,
        [environmentId, assertDecimal8(delta)],
      );
      return r ? shortDecimal(r.balance) : null;
    },
    async setCallbackSecret(environmentId, secretEnc) {
      await db.run('UPDATE environments SET callback_secret_enc = $2 WHERE id = $1', [environmentId, secretEnc]);
    },
    async insertApiKey(k) {
      await db.insert('api_keys', apiKeyToRow(k));
    },
    async getApiKey(id) {
      const r = await db.one<ApiKeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
      return r ? apiKeyFromRow(r) : null;
    },
    async revokeApiKey(id, tenantId, at) {
      return (await db.run('UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND tenant_id = $2 AND revoked_at IS NULL', [id, tenantId, at])) > 0;
    },
    async insertMember(m) {
      await db.insert('members', memberToRow(m));
    },
    async getMemberByTokenHash(tokenHash) {
      const r = await db.one<MemberRow>('SELECT * FROM members WHERE token_hash = $1', [tokenHash]);
      return r ? memberFromRow(r) : null;
    },
    async setMemberActive(memberId, tenantId, active) {
      return (await db.run('UPDATE members SET active = $3 WHERE id = $1 AND tenant_id = $2', [memberId, tenantId, active])) > 0;
    },
    async insertServiceAccount(a) {
      await db.insert('service_accounts', serviceAccountToRow(a));
    },
    async findServiceAccount(tenantId, email) {
      const r = await db.one<ServiceAccountRow>('SELECT * FROM service_accounts WHERE tenant_id = $1 AND email = $2', [tenantId, email]);
      return r ? serviceAccountFromRow(r) : null;
    },
  };
}
