// Provisioning: tenants with their two environments, API clients, members and service
// accounts. Secrets are returned once, here, and stored only hashed or sealed.
import { generateSecret } from '../../signing/signature.ts';
import { ALL_PERMISSIONS, type EnvironmentName, type MemberRole, type Permission } from './model.ts';
import { forgetCredential } from './auth.ts';
import type { Services } from './context.ts';
import { AppError } from './errors.ts';
import { newEnvironmentId, newId, newMemberId, newServiceAccountId, newTenantId } from './ids.ts';
import { hashToken, randomToken } from './secrets.ts';

/** A new tenant's test wallet is funded so a first payout works at once; live starts empty. */
export const TEST_WALLET_START = '1000000';

export interface CreatedApiKey {
  apiKey: string;
  apiHash: string;
  environment: EnvironmentName;
  permissions: Permission[];
}

export interface CreatedTenant {
  tenantId: string;
  name: string;
  apiKey: string;
  apiHash: string;
  environment: 'test';
  permissions: Permission[];
  memberToken: string;
  memberEmail: string;
  callbackSecret: string;
  liveCallbackSecret: string;
}

/**
 * Credentials given instead of generated ones (`npm run mock -- --stateful` takes them from its
 * settings, so that a frontend's .env can hold them): each one absent is generated.
 */
export interface GivenCredentials {
  tenantId?: string;
  apiKey?: string;
  apiHash?: string;
  memberToken?: string;
  callbackSecret?: string;
}

export async function createTenant(services: Services, input: { name: string; adminEmail?: string; given?: GivenCredentials }): Promise<CreatedTenant> {
  const name = input.name.trim();
  if (!name) throw new AppError('validation-failed', 'A tenant needs a name.');
  const given = input.given ?? {};
  const now = services.clock.now();
  const tenantId = given.tenantId ?? newTenantId();
  const callbackSecret = given.callbackSecret ?? generateSecret();
  const liveCallbackSecret = generateSecret();
  await services.store.transaction(async (tx) => {
    await tx.tenants.insertTenant({ id: tenantId, name, createdAt: now });
    for (const [env, secret, balance] of [
      ['test', callbackSecret, TEST_WALLET_START],
      ['live', liveCallbackSecret, '0'],
    ] as const) {
      await tx.tenants.insertEnvironment({
        id: newEnvironmentId(),
        tenantId,
        name: env,
        walletBalance: balance,
        callbackSecretEnc: services.secrets.seal(secret),
        createdAt: now,
      });
    }
  });
  const keyGiven = given.apiKey !== undefined && given.apiHash !== undefined ? { given: { apiKey: given.apiKey, apiHash: given.apiHash } } : {};
  const key = await createApiKey(services, { tenantId, environment: 'test', permissions: [...ALL_PERMISSIONS], ...keyGiven });
  const memberEmail = input.adminEmail ?? `admin@${tenantId}.invalid`;
  const member = await createMember(services, { tenantId, email: memberEmail, role: 'administrator', ...(given.memberToken ? { givenToken: given.memberToken } : {}) });
  return {
    tenantId,
    name,
    apiKey: key.apiKey,
    apiHash: key.apiHash,
    environment: 'test',
    permissions: key.permissions,
    memberToken: member.memberToken,
    memberEmail,
    callbackSecret,
    liveCallbackSecret,
  };
}

export async function createApiKey(
  services: Services,
  input: { tenantId: string; environment: EnvironmentName; permissions: readonly Permission[]; label?: string; given?: { apiKey: string; apiHash: string } },
): Promise<CreatedApiKey> {
  const unknown = input.permissions.filter((p) => !ALL_PERMISSIONS.includes(p));
  if (unknown.length > 0) throw new AppError('validation-failed', `Unknown permission(s): ${unknown.join(', ')}.`);
  const apiKey = input.given?.apiKey ?? newId(`pk_${input.environment}`);
  const apiHash = input.given?.apiHash ?? randomToken(`sk_${input.environment}_`);
  await services.store.transaction(async (tx) => {
    const env = await tx.tenants.findEnvironment(input.tenantId, input.environment);
    if (!env) throw new AppError('not-found', `No tenant ${input.tenantId}.`);
    await tx.tenants.insertApiKey({
      id: apiKey,
      tenantId: input.tenantId,
      environmentId: env.id,
      secretHash: hashToken(apiHash),
      permissions: [...new Set(input.permissions)],
      label: input.label ?? null,
      createdAt: services.clock.now(),
      revokedAt: null,
    });
  });
  return { apiKey, apiHash, environment: input.environment, permissions: [...new Set(input.permissions)] };
}

export async function createMember(
  services: Services,
  input: { tenantId: string; email: string; role: MemberRole; active?: boolean; givenToken?: string },
): Promise<{ memberId: string; memberToken: string; role: MemberRole; active: boolean }> {
  const memberId = newMemberId();
  const memberToken = input.givenToken ?? randomToken('mt_');
  const active = input.active ?? true;
  await services.store.transaction(async (tx) => {
    if (!(await tx.tenants.getTenant(input.tenantId))) throw new AppError('not-found', `No tenant ${input.tenantId}.`);
    await tx.tenants.insertMember({
      id: memberId,
      tenantId: input.tenantId,
      email: input.email,
      role: input.role,
      active,
      tokenHash: hashToken(memberToken),
      createdAt: services.clock.now(),
      sessionEpoch: 0,
    });
  });
  return { memberId, memberToken, role: input.role, active };
}

export async function setMemberActive(services: Services, input: { tenantId: string; memberId: string; active: boolean }): Promise<void> {
  // Deactivating ends the member's portal sessions for good: reactivation does not revive them.
  const ok = await services.store.transaction(
    async (tx) => (await tx.tenants.setMemberActive(input.memberId, input.tenantId, input.active)) && (input.active || (await tx.tenants.endMemberSessions(input.memberId, input.tenantId))),
  );
  if (!ok) throw new AppError('not-found', `No member ${input.memberId} in tenant ${input.tenantId}.`);
  // Refused from the next request on in this process; other instances within AUTH_CACHE_TTL_MS.
  forgetCredential(services, input.memberId);
}

/** Ends every portal session of the member (a lost laptop, a shared screen): each gets the sign-in page next. */
export async function endMemberSessions(services: Services, input: { tenantId: string; memberId: string }): Promise<{ memberId: string; sessionsEnded: true }> {
  const ok = await services.store.transaction((tx) => tx.tenants.endMemberSessions(input.memberId, input.tenantId));
  if (!ok) throw new AppError('not-found', `No member ${input.memberId} in tenant ${input.tenantId}.`);
  return { memberId: input.memberId, sessionsEnded: true };
}

/** Revokes an API key for good; requests with it are refused within the auth cache's bound. */
export async function revokeApiKey(services: Services, input: { tenantId: string; apiKey: string }): Promise<{ apiKey: string; revokedAt: number }> {
  const at = services.clock.now();
  const changed = await services.store.transaction(async (tx) => {
    const key = await tx.tenants.getApiKey(input.apiKey);
    if (!key || key.tenantId !== input.tenantId) throw new AppError('not-found', `No API key ${input.apiKey} in tenant ${input.tenantId}.`);
    return tx.tenants.revokeApiKey(input.apiKey, input.tenantId, at);
  });
  forgetCredential(services, input.apiKey);
  if (!changed) {
    const key = await services.store.read((tx) => tx.tenants.getApiKey(input.apiKey));
    return { apiKey: input.apiKey, revokedAt: key?.revokedAt ?? at };
  }
  return { apiKey: input.apiKey, revokedAt: at };
}

export async function createServiceAccount(services: Services, input: { tenantId: string; email: string }): Promise<{ serviceAccountId: string; email: string }> {
  const id = newServiceAccountId();
  const email = input.email.trim().toLowerCase();
  await services.store.transaction(async (tx) => {
    if (!(await tx.tenants.getTenant(input.tenantId))) throw new AppError('not-found', `No tenant ${input.tenantId}.`);
    await tx.tenants.insertServiceAccount({ id, tenantId: input.tenantId, email, createdAt: services.clock.now() });
  });
  return { serviceAccountId: id, email };
}
