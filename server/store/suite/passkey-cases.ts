// The portal's passkeys: what a member's credentials are stored as, that a credential id belongs
// to one member of one tenant, and that a use is recorded only against the counter it was
// verified with (two simultaneous sign-ins with one assertion cannot both count).
import { expect, it } from 'vitest';
import { newPasskeyId } from '../../domain/ids.ts';
import type { MemberRecord, PasskeyRecord } from '../../domain/model.ts';
import type { Store } from '../../domain/store.ts';
import { T0, expectUnique, memberRecord, seedEnvironment, unique } from './fixtures.ts';

function passkeyRecord(member: MemberRecord, o: Partial<PasskeyRecord> = {}): PasskeyRecord {
  return {
    id: newPasskeyId(),
    tenantId: member.tenantId,
    memberId: member.id,
    credentialId: unique('cred'),
    name: 'Work laptop',
    publicKey: 'pQECAyYgASFYIBm-public-key-in-cose-form',
    counter: 0,
    transports: ['internal', 'hybrid'],
    multiDevice: true,
    backedUp: false,
    createdAt: T0,
    lastUsedAt: null,
    ...o,
  };
}

async function seedMember(store: Store): Promise<MemberRecord> {
  const { tenant } = await seedEnvironment(store);
  const member = memberRecord(tenant);
  await store.transaction((tx) => tx.tenants.insertMember(member));
  return member;
}

export function passkeyCases(s: () => Store): void {
  it('round-trips passkeys, lists a member’s oldest first, and finds the member by id', async () => {
    const member = await seedMember(s());
    const first = passkeyRecord(member, { createdAt: T0, transports: [] });
    const second = passkeyRecord(member, { name: 'Phone', createdAt: T0 + 1000, counter: 7, multiDevice: false, backedUp: true, lastUsedAt: T0 + 2000 });
    await s().transaction(async (tx) => {
      await tx.passkeys.insert(second);
      await tx.passkeys.insert(first);
    });
    expect(await s().read((tx) => tx.passkeys.listByMember(member.id))).toEqual([first, second]);
    expect(await s().read((tx) => tx.passkeys.getByCredentialId(second.credentialId))).toEqual(second);
    expect(await s().read((tx) => tx.passkeys.getByCredentialId('unknown'))).toBeNull();
    expect(await s().read((tx) => tx.tenants.getMember(member.id))).toEqual(member);
    expect(await s().read((tx) => tx.tenants.getMember('mem_unknown'))).toBeNull();
  });

  it('ends a member’s sessions by bumping their epoch, in their tenant only', async () => {
    const member = await seedMember(s());
    const other = await seedMember(s());
    expect(await s().transaction((tx) => tx.tenants.endMemberSessions(member.id, member.tenantId))).toBe(true);
    expect(await s().transaction((tx) => tx.tenants.endMemberSessions(member.id, member.tenantId))).toBe(true);
    expect(await s().transaction((tx) => tx.tenants.endMemberSessions(member.id, other.tenantId))).toBe(false);
    expect((await s().read((tx) => tx.tenants.getMember(member.id)))?.sessionEpoch).toBe(2);
    expect((await s().read((tx) => tx.tenants.getMemberByTokenHash(member.tokenHash)))?.sessionEpoch).toBe(2);
    expect((await s().read((tx) => tx.tenants.getMember(other.id)))?.sessionEpoch).toBe(0);
  });

  it('refuses a credential id already registered, to the same member or to another tenant’s', async () => {
    const [a, b] = [await seedMember(s()), await seedMember(s())];
    const taken = passkeyRecord(a);
    await s().transaction((tx) => tx.passkeys.insert(taken));
    await expectUnique(s().transaction((tx) => tx.passkeys.insert(passkeyRecord(a, { credentialId: taken.credentialId }))), 'passkey_credential');
    await expectUnique(s().transaction((tx) => tx.passkeys.insert(passkeyRecord(b, { credentialId: taken.credentialId }))), 'passkey_credential');
    expect(await s().read((tx) => tx.passkeys.listByMember(b.id))).toEqual([]);
  });

  it('records a use only against the counter it was verified with', async () => {
    const member = await seedMember(s());
    const key = passkeyRecord(member, { counter: 4 });
    await s().transaction((tx) => tx.passkeys.insert(key));
    const use = { seenCounter: 4, counter: 5, backedUp: true, at: T0 + 60_000 };
    expect(await s().transaction((tx) => tx.passkeys.recordUse(key.id, use))).toBe(true);
    // The same assertion again (or a second one verified against counter 4) counts no more.
    expect(await s().transaction((tx) => tx.passkeys.recordUse(key.id, use))).toBe(false);
    expect(await s().read((tx) => tx.passkeys.getByCredentialId(key.credentialId))).toEqual({ ...key, counter: 5, backedUp: true, lastUsedAt: T0 + 60_000 });
  });

  it('removes a passkey only for its member, and all of a member’s at once', async () => {
    const [a, b] = [await seedMember(s()), await seedMember(s())];
    const [a1, a2, b1] = [passkeyRecord(a), passkeyRecord(a), passkeyRecord(b)];
    await s().transaction(async (tx) => {
      for (const p of [a1, a2, b1]) await tx.passkeys.insert(p);
    });
    expect(await s().transaction((tx) => tx.passkeys.remove(a1.id, b.id))).toBe(false);
    expect(await s().transaction((tx) => tx.passkeys.remove(a1.id, a.id))).toBe(true);
    expect(await s().transaction((tx) => tx.passkeys.remove(a1.id, a.id))).toBe(false);
    expect(await s().transaction((tx) => tx.passkeys.removeAllOfMember(a.id))).toBe(1);
    expect(await s().read((tx) => tx.passkeys.listByMember(a.id))).toEqual([]);
    expect(await s().read((tx) => tx.passkeys.listByMember(b.id))).toEqual([b1]);
  });
}
