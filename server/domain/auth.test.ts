// The cache of verified credentials: a repeated request costs no store read, and revocation
// or deactivation takes effect at once in this process and within the TTL everywhere else.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openTestStore } from '../testing/store.ts';
import type { Store } from './store.ts';
import { createDestinationPolicy } from '../destination/policy.ts';
import { createMember, createTenant, revokeApiKey, setMemberActive, type CreatedTenant } from './admin.ts';
import { authenticateApiKey, authenticateMember, createAuthCaches } from './auth.ts';
import { ManualClock } from './clock.ts';
import type { Services } from './context.ts';
import { isAppError } from './errors.ts';
import { createSecretBox } from './secrets.ts';

const TTL = 5_000;

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isAppError(e)) return e.slug;
    throw e;
  }
  return 'accepted';
}

describe('authentication cache', () => {
  let store: Store;
  let clock: ManualClock;
  let services: Services;
  let tenant: CreatedTenant;
  beforeEach(async () => {
    store = await openTestStore();
    clock = new ManualClock();
    services = {
      store,
      clock,
      secrets: createSecretBox(randomBytes(32)),
      destinations: createDestinationPolicy({ allowInsecure: true, nodeEnv: 'test' }),
      log: pino({ level: 'silent' }),
      auth: createAuthCaches(clock, TTL),
    };
    tenant = await createTenant(services, { name: 'Cache' });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await store.close();
  });

  it('answers a repeated API key from the cache, and a wrong secret from the store', async () => {
    const reads = vi.spyOn(store, 'read');
    const first = await authenticateApiKey(services, tenant.apiKey, tenant.apiHash);
    expect(reads).toHaveBeenCalledTimes(1);
    const again = await authenticateApiKey(services, tenant.apiKey, tenant.apiHash);
    expect(again).toEqual(first);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(await refusal(authenticateApiKey(services, tenant.apiKey, `${tenant.apiHash}x`))).toBe('unauthenticated');
    expect(await refusal(authenticateApiKey(services, tenant.apiKey, tenant.apiHash.slice(0, -1)))).toBe('unauthenticated');
    expect(reads).toHaveBeenCalledTimes(3);
    // A fresh entry after the TTL: the store is asked again.
    clock.advance(TTL);
    await authenticateApiKey(services, tenant.apiKey, tenant.apiHash);
    expect(reads).toHaveBeenCalledTimes(4);
  });

  it('refuses a key revoked in this process from the next request on', async () => {
    await authenticateApiKey(services, tenant.apiKey, tenant.apiHash);
    await revokeApiKey(services, { tenantId: tenant.tenantId, apiKey: tenant.apiKey });
    expect(await refusal(authenticateApiKey(services, tenant.apiKey, tenant.apiHash))).toBe('unauthenticated');
  });

  it('refuses a key revoked by another process within the TTL', async () => {
    await authenticateApiKey(services, tenant.apiKey, tenant.apiHash);
    // Another instance (or the admin tool) revokes it: this process's cache is not told.
    await store.transaction((tx) => tx.tenants.revokeApiKey(tenant.apiKey, tenant.tenantId, clock.now()));
    clock.advance(TTL - 1);
    expect(await refusal(authenticateApiKey(services, tenant.apiKey, tenant.apiHash))).toBe('accepted');
    clock.advance(1);
    expect(await refusal(authenticateApiKey(services, tenant.apiKey, tenant.apiHash))).toBe('unauthenticated');
  });

  it('refuses a deactivated member at once in this process, and within the TTL from elsewhere', async () => {
    const member = await createMember(services, { tenantId: tenant.tenantId, email: 'dev@cache.test', role: 'developer' });
    await authenticateMember(services, member.memberToken, 'test');
    await setMemberActive(services, { tenantId: tenant.tenantId, memberId: member.memberId, active: false });
    expect(await refusal(authenticateMember(services, member.memberToken, 'test'))).toBe('permission-denied');

    const other = await createMember(services, { tenantId: tenant.tenantId, email: 'ops@cache.test', role: 'viewer' });
    await authenticateMember(services, other.memberToken, 'live');
    await store.transaction((tx) => tx.tenants.setMemberActive(other.memberId, tenant.tenantId, false));
    clock.advance(TTL - 1);
    expect(await refusal(authenticateMember(services, other.memberToken, 'live'))).toBe('accepted');
    clock.advance(1);
    expect(await refusal(authenticateMember(services, other.memberToken, 'live'))).toBe('permission-denied');
  });

  it('asks the store every time with a TTL of 0', async () => {
    services.auth = createAuthCaches(clock, 0);
    const reads = vi.spyOn(store, 'read');
    await authenticateApiKey(services, tenant.apiKey, tenant.apiHash);
    await authenticateApiKey(services, tenant.apiKey, tenant.apiHash);
    expect(reads).toHaveBeenCalledTimes(2);
    await store.transaction((tx) => tx.tenants.revokeApiKey(tenant.apiKey, tenant.tenantId, clock.now()));
    expect(await refusal(authenticateApiKey(services, tenant.apiKey, tenant.apiHash))).toBe('unauthenticated');
  });
});
