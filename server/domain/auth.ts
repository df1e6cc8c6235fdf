// Who is calling: an API client (x-api-key + x-api-hash) or a portal member (bearer token).
import type { EnvironmentName, Permission, Principal } from './model.ts';
import type { Services } from './context.ts';
import { AuthCache, DEFAULT_AUTH_CACHE_TTL_MS, type AuthCaches } from './auth-cache.ts';
import type { Clock } from './clock.ts';
import { AppError } from './errors.ts';
import { hashToken, tokenMatches } from './secrets.ts';

export type { AuthCaches, Principal };

const unauthenticated = (detail: string): AppError => new AppError('unauthenticated', detail);

// A digest to compare against when the key id is unknown, so that an unknown key and a wrong
// hash take the same time.
const DECOY_HASH = hashToken('decoy');

export function createAuthCaches(clock: Clock, ttlMs: number = DEFAULT_AUTH_CACHE_TTL_MS): AuthCaches {
  return { apiKeys: new AuthCache(clock, ttlMs), members: new AuthCache(clock, ttlMs) };
}

/** A key revoked or a member deactivated in this process is refused from the next request on. */
export function forgetCredential(services: Services, owner: string): void {
  services.auth?.apiKeys.invalidate(owner);
  services.auth?.members.invalidate(owner);
}

export async function authenticateApiKey(services: Services, apiKey: string | undefined, apiHash: string | undefined): Promise<Principal> {
  if (!apiKey || !apiHash) throw unauthenticated('The x-api-key and x-api-hash headers are required.');
  const cached = services.auth?.apiKeys.get(apiKey, apiHash);
  if (cached) return cached;
  const found = await services.store.read(async (tx) => {
    const key = await tx.tenants.getApiKey(apiKey);
    const env = key ? await tx.tenants.getEnvironment(key.environmentId) : null;
    return { key, env };
  });
  const ok = tokenMatches(apiHash, found.key?.secretHash ?? DECOY_HASH);
  if (!found.key || !found.env || !ok || found.key.revokedAt !== null) {
    throw unauthenticated('The x-api-key and x-api-hash headers do not match an active API client.');
  }
  const principal: Principal = {
    kind: 'api_key',
    keyId: found.key.id,
    tenantId: found.key.tenantId,
    environmentId: found.env.id,
    environment: found.env.name,
    permissions: new Set(found.key.permissions),
  };
  services.auth?.apiKeys.set(apiKey, found.key.id, principal, apiHash);
  return principal;
}

export async function authenticateMember(services: Services, token: string | undefined, environment: EnvironmentName): Promise<Principal> {
  if (!token) throw unauthenticated('A member token is required (Authorization: Bearer <token>).');
  // Looked up by digest, as in the store: a map lookup by the token itself could leak timing.
  const tokenHash = hashToken(token);
  const cacheKey = `${environment}:${tokenHash}`;
  const cached = services.auth?.members.get(cacheKey);
  if (cached) return cached;
  const found = await services.store.read(async (tx) => {
    const member = await tx.tenants.getMemberByTokenHash(tokenHash);
    const env = member ? await tx.tenants.findEnvironment(member.tenantId, environment) : null;
    return { member, env };
  });
  if (!found.member || !found.env) throw unauthenticated('The member token is not valid.');
  if (!found.member.active) throw new AppError('permission-denied', 'This member is inactive.');
  const principal: Principal = {
    kind: 'member',
    memberId: found.member.id,
    role: found.member.role,
    tenantId: found.member.tenantId,
    environmentId: found.env.id,
    environment: found.env.name,
  };
  services.auth?.members.set(cacheKey, found.member.id, principal);
  return principal;
}

/** API keys need the operation's permission; members need one of the operation's roles. */
export function authorize(principal: Principal, need: { permission: Permission | null; memberRoles: readonly string[] | null }): void {
  if (principal.kind === 'api_key') {
    if (need.permission && !principal.permissions.has(need.permission)) {
      throw new AppError('permission-denied', `This API key lacks the ${need.permission} permission.`);
    }
    return;
  }
  if (!need.memberRoles?.includes(principal.role)) {
    throw new AppError('permission-denied', `A ${principal.role} may not do this; ${need.memberRoles?.join(' or ') ?? 'no member role'} may.`);
  }
}
