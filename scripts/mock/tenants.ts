// The stateful mock's test tenants (`--tenants N`) and the JSON file their credentials are
// written to, for a frontend's scripts to read. Each tenant has a funded test wallet, a key with
// every permission, a read-only key, a key with no permission (to see 403s), a live key (to see
// the sandbox refuse live credentials), an administrator
// and a viewer member, and a service account whose e-mail refunds name. Secrets are stored
// only hashed, so a kept state folder keeps its tenants file too: a restart reads it back.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createApiKey, createMember, createServiceAccount, createTenant, type GivenCredentials } from '../../server/domain/admin.ts';
import type { Services } from '../../server/domain/context.ts';
import { ALL_PERMISSIONS, type EnvironmentName, type Permission } from '../../server/domain/model.ts';

export const READ_ONLY: readonly Permission[] = ['transactions_read', 'orders_read'];

export interface MockKey {
  apiKey: string;
  apiHash: string;
  permissions: Permission[];
}

export interface MockTenant {
  name: string;
  tenantId: string;
  /** The test key with every permission. */
  apiKey: string;
  apiHash: string;
  readOnlyKey: MockKey;
  noPermissionKey: MockKey;
  /** A key of the live environment with every permission (absent in a file written before it was added). */
  liveKey?: MockKey;
  /** The administrator's member token (the portal, the management API). */
  memberToken: string;
  viewerMemberToken: string;
  /** The test environment's payout-callback secret. */
  callbackSecret: string;
  /** A service account of the tenant: the e-mail a refund names. */
  refundEmail: string;
}

export interface TenantsFile {
  baseUrl: string;
  tenants: MockTenant[];
}

/** Creates tenant number `n` (1-based); the first takes the credentials the settings pin. */
async function createMockTenant(services: Services, n: number, given: GivenCredentials): Promise<MockTenant> {
  const created = await createTenant(services, { name: `Mock Merchant ${n}`, given: n === 1 ? given : {} });
  const tenantId = created.tenantId;
  const key = async (permissions: readonly Permission[], label: string, environment: EnvironmentName = 'test'): Promise<MockKey> => {
    const k = await createApiKey(services, { tenantId, environment, permissions, label });
    return { apiKey: k.apiKey, apiHash: k.apiHash, permissions: k.permissions };
  };
  // A host name of the tenant's own (an id's `_` is not allowed in one), under a reserved domain.
  const domain = `${tenantId.toLowerCase().replace(/[^a-z0-9-]/g, '-')}.mock.invalid`;
  const viewer = await createMember(services, { tenantId, email: `viewer@${domain}`, role: 'viewer' });
  const refunds = await createServiceAccount(services, { tenantId, email: `refunds@${domain}` });
  return {
    name: created.name,
    tenantId,
    apiKey: created.apiKey,
    apiHash: created.apiHash,
    readOnlyKey: await key(READ_ONLY, 'mock: read-only'),
    noPermissionKey: await key([], 'mock: no permission'),
    liveKey: await key(ALL_PERMISSIONS, 'mock: live', 'live'),
    memberToken: created.memberToken,
    viewerMemberToken: viewer.memberToken,
    callbackSecret: created.callbackSecret,
    refundEmail: refunds.email,
  };
}

/**
 * The `count` tenants: those of `kept` (a state folder's file) that the store still has, then
 * new ones up to `count`. Pinned credentials apply to a new first tenant only.
 */
export async function provisionTenants(services: Services, count: number, kept: readonly MockTenant[], given: GivenCredentials): Promise<MockTenant[]> {
  const tenants: MockTenant[] = [];
  for (const t of kept) {
    if (tenants.length < count && (await services.store.read((tx) => tx.tenants.getTenant(t.tenantId)))) tenants.push(t);
  }
  while (tenants.length < count) tenants.push(await createMockTenant(services, tenants.length + 1, tenants.length === 0 ? given : {}));
  return tenants;
}

/** The pinned credentials a kept first tenant does not have (they cannot apply: it exists). */
export function unappliedCredentials(first: MockTenant | undefined, given: GivenCredentials): string[] {
  if (!first) return [];
  return (Object.keys(given) as Array<keyof GivenCredentials>).filter((k) => given[k] !== first[k]);
}

/** The tenants a file records; none when there is no file. */
export async function readTenantsFile(file: string): Promise<MockTenant[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return (JSON.parse(text) as TenantsFile).tenants;
}

/** Written whole or not at all (a reader never sees half a file), readable by its owner only. */
export async function writeTenantsFile(file: string, content: TenantsFile): Promise<void> {
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  await rename(partial, file);
}
