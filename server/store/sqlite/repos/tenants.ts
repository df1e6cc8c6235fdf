import { addDecimal, compareDecimal } from '../../../money/decimal.ts';
import type { TenantRepo } from '../../types.ts';
import { bool, type Db } from '../db.ts';
import {
  apiKeyFromRow,
  apiKeyToRow,
  environmentFromRow,
  environmentToRow,
  insertSql,
  memberFromRow,
  memberToRow,
  serviceAccountFromRow,
  tenantFromRow,
  type ApiKeyRow,
  type EnvironmentRow,
  type MemberRow,
  type ServiceAccountRow,
  type TenantRow,
} from '../rows.ts';

export function tenantRepo(db: Db): TenantRepo {
  return {
    async insertTenant(t) {
      db.run('INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)', t.id, t.name, t.createdAt);
    },
    async getTenant(id) {
      const r = db.get<TenantRow>('SELECT * FROM tenants WHERE id = ?', id);
      return r ? tenantFromRow(r) : null;
    },
    async insertEnvironment(e) {
      const row = environmentToRow(e);
      db.run(insertSql('environments', row), row);
    },
    async getEnvironment(id) {
      const r = db.get<EnvironmentRow>('SELECT * FROM environments WHERE id = ?', id);
      return r ? environmentFromRow(r) : null;
    },
    async findEnvironment(tenantId, name) {
      const r = db.get<EnvironmentRow>('SELECT * FROM environments WHERE tenant_id = ? AND name = ?', tenantId, name);
      return r ? environmentFromRow(r) : null;
    },
    async adjustWallet(environmentId, delta) {
      // Exact decimal arithmetic in BigInt (never the database's numeric type, never floats).
      // The caller's transaction holds SQLite's write lock, so read-then-write cannot race.
      const r = db.get<{ wallet_balance: string }>('SELECT wallet_balance FROM environments WHERE id = ?', environmentId);
      if (!r) return null;
      const next = addDecimal(r.wallet_balance, delta);
      if (compareDecimal(next, '0') < 0) return null;
      db.run('UPDATE environments SET wallet_balance = ? WHERE id = ?', next, environmentId);
      return next;
    },
    async setCallbackSecret(environmentId, secretEnc) {
      db.run('UPDATE environments SET callback_secret_enc = ? WHERE id = ?', secretEnc, environmentId);
    },
    async insertApiKey(k) {
      const row = apiKeyToRow(k);
      db.run(insertSql('api_keys', row), row);
    },
    async getApiKey(id) {
      const r = db.get<ApiKeyRow>('SELECT * FROM api_keys WHERE id = ?', id);
      return r ? apiKeyFromRow(r) : null;
    },
    async revokeApiKey(id, tenantId, at) {
      return db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND tenant_id = ? AND revoked_at IS NULL', at, id, tenantId).changes > 0;
    },
    async insertMember(m) {
      const row = memberToRow(m);
      db.run(insertSql('members', row), row);
    },
    async getMemberByTokenHash(tokenHash) {
      const r = db.get<MemberRow>('SELECT * FROM members WHERE token_hash = ?', tokenHash);
      return r ? memberFromRow(r) : null;
    },
    async setMemberActive(memberId, tenantId, active) {
      return db.run('UPDATE members SET active = ? WHERE id = ? AND tenant_id = ?', bool(active), memberId, tenantId).changes > 0;
    },
    async insertServiceAccount(a) {
      db.run('INSERT INTO service_accounts (id, tenant_id, email, created_at) VALUES (?, ?, ?, ?)', a.id, a.tenantId, a.email, a.createdAt);
    },
    async findServiceAccount(tenantId, email) {
      const r = db.get<ServiceAccountRow>('SELECT * FROM service_accounts WHERE tenant_id = ? AND email = ?', tenantId, email);
      return r ? serviceAccountFromRow(r) : null;
    },
  };
}
