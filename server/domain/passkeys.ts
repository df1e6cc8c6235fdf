// A member's passkeys for the developer portal, as records: the portal runs the WebAuthn
// ceremonies (server/portal/passkeys/), this module only reads and writes what they produce, and
// the operator's revocation (npm run admin -- member passkeys revoke).
import type { Services } from './context.ts';
import { AppError } from './errors.ts';
import type { MemberRecord, PasskeyRecord } from './model.ts';
import { UniqueViolation } from './store.ts';

/** The member's passkeys, oldest first. */
export function memberPasskeys(services: Services, memberId: string): Promise<PasskeyRecord[]> {
  return services.store.read((tx) => tx.passkeys.listByMember(memberId));
}

/** Stores a verified new passkey; false when its credential id is registered already (to anyone). */
export async function savePasskey(services: Services, passkey: PasskeyRecord): Promise<boolean> {
  try {
    await services.store.transaction((tx) => tx.passkeys.insert(passkey));
    return true;
  } catch (e) {
    if (e instanceof UniqueViolation && e.constraint === 'passkey_credential') return false;
    throw e;
  }
}

/** The passkey of a credential id with its member, when both exist and belong to one tenant. */
export async function passkeyOwner(services: Services, credentialId: string): Promise<{ passkey: PasskeyRecord; member: MemberRecord } | null> {
  return services.store.read(async (tx) => {
    const passkey = await tx.passkeys.getByCredentialId(credentialId);
    const member = passkey ? await tx.tenants.getMember(passkey.memberId) : null;
    return passkey && member && member.tenantId === passkey.tenantId ? { passkey, member } : null;
  });
}

/** Records a verified assertion; false when another use of the passkey was recorded first. */
export function recordPasskeyUse(services: Services, passkey: PasskeyRecord, use: { counter: number; backedUp: boolean }): Promise<boolean> {
  const at = services.clock.now();
  return services.store.transaction((tx) => tx.passkeys.recordUse(passkey.id, { seenCounter: passkey.counter, counter: use.counter, backedUp: use.backedUp, at }));
}

export function removePasskey(services: Services, memberId: string, passkeyId: string): Promise<boolean> {
  return services.store.transaction((tx) => tx.passkeys.remove(passkeyId, memberId));
}

// ---- the operator's view (npm run admin) ------------------------------------------------

/** What an operator sees of a passkey: never the public key. */
export interface PasskeySummary {
  passkeyId: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  backedUp: boolean;
}

const summary = (p: PasskeyRecord): PasskeySummary => ({
  passkeyId: p.id,
  name: p.name,
  createdAt: new Date(p.createdAt).toISOString(),
  lastUsedAt: p.lastUsedAt === null ? null : new Date(p.lastUsedAt).toISOString(),
  backedUp: p.backedUp,
});

async function tenantMember(services: Services, input: { tenantId: string; memberId: string }): Promise<MemberRecord> {
  const member = await services.store.read((tx) => tx.tenants.getMember(input.memberId));
  if (!member || member.tenantId !== input.tenantId) throw new AppError('not-found', `No member ${input.memberId} in tenant ${input.tenantId}.`);
  return member;
}

export async function listMemberPasskeys(services: Services, input: { tenantId: string; memberId: string }): Promise<{ memberId: string; passkeys: PasskeySummary[] }> {
  const member = await tenantMember(services, input);
  return { memberId: member.id, passkeys: (await memberPasskeys(services, member.id)).map(summary) };
}

/** Removes one passkey of the member (a lost device), or all of them; answers what was removed. */
export async function revokeMemberPasskeys(
  services: Services,
  input: { tenantId: string; memberId: string; passkeyId: string | null },
): Promise<{ memberId: string; revoked: number }> {
  const member = await tenantMember(services, input);
  const { passkeyId } = input;
  if (passkeyId === null) return { memberId: member.id, revoked: await services.store.transaction((tx) => tx.passkeys.removeAllOfMember(member.id)) };
  if (!(await removePasskey(services, member.id, passkeyId))) throw new AppError('not-found', `Member ${member.id} has no passkey ${passkeyId}.`);
  return { memberId: member.id, revoked: 1 };
}
