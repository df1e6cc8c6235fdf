// The store's sealed secrets (SealedSecretRepo, key rotation): counted by the prefix that names
// their key, paged in id order without those already under the newest key, and replaced only
// while they still hold the value that was read (a rotation meanwhile wins).
import { expect, it } from 'vitest';
import type { Store } from '../../domain/store.ts';
import { endpointRecord, seedEnvironment } from './fixtures.ts';

export function sealedCases(s: () => Store): void {
  it('counts sealed values by the prefix that names their key, and names one that no prefix matches', async () => {
    const { env: a } = await seedEnvironment(s());
    const { env: b } = await seedEnvironment(s());
    const { env: c } = await seedEnvironment(s());
    await s().transaction(async (tx) => {
      await tx.sealed.replace('callback-secret', b.id, b.callbackSecretEnc, 'v2.k2.iv.tag.ct');
      await tx.sealed.replace('callback-secret', c.id, c.callbackSecretEnc, 'v2.K2.iv.tag.ct');
      await tx.endpoints.insert(endpointRecord(a, { secretEnc: 'v2.k2.iv.tag.ct2' }));
    });
    const callbacks = await s().read((tx) => tx.sealed.census('callback-secret', ['v2.k2.', 'v1.']));
    // Exact: v2.K2. is another key than v2.k2. (SQLite's LIKE would have taken it for one).
    expect(callbacks).toEqual({ counts: [1, 1], other: 1, otherSample: 'v2.K2.iv.tag.ct' });
    expect(await s().read((tx) => tx.sealed.census('endpoint-secret', ['v2.k2.', 'v1.']))).toEqual({ counts: [1, 0], other: 0, otherSample: null });
    expect(a.callbackSecretEnc.startsWith('v1.')).toBe(true);
  });

  it('pages in id order past those already under the newest key, and replaces only the value it read', async () => {
    const envs = [];
    for (let i = 0; i < 5; i++) envs.push((await seedEnvironment(s())).env);
    envs.sort((x, y) => (x.id < y.id ? -1 : 1));
    const [first, second, third] = envs;
    await s().transaction((tx) => tx.sealed.replace('callback-secret', second!.id, second!.callbackSecretEnc, 'v2.new.x.y.z'));
    const page1 = await s().read((tx) => tx.sealed.page('callback-secret', '', 'v2.new.', 2));
    expect(page1).toEqual([
      { id: first!.id, sealed: first!.callbackSecretEnc },
      { id: third!.id, sealed: third!.callbackSecretEnc },
    ]);
    const page2 = await s().read((tx) => tx.sealed.page('callback-secret', third!.id, 'v2.new.', 10));
    expect(page2.map((v) => v.id)).toEqual(envs.slice(3).map((e) => e.id));
    // Compare-and-set: a value rotated since it was read is not overwritten.
    await s().transaction((tx) => tx.tenants.setCallbackSecret(first!.id, 'v2.new.rotated.by.merchant'));
    expect(await s().transaction((tx) => tx.sealed.replace('callback-secret', first!.id, first!.callbackSecretEnc, 'v2.new.resealed.x.y'))).toBe(false);
    expect((await s().read((tx) => tx.tenants.getEnvironment(first!.id)))?.callbackSecretEnc).toBe('v2.new.rotated.by.merchant');
    expect(await s().transaction((tx) => tx.sealed.replace('callback-secret', third!.id, third!.callbackSecretEnc, 'v2.new.resealed.x.y'))).toBe(true);
    expect((await s().read((tx) => tx.tenants.getEnvironment(third!.id)))?.callbackSecretEnc).toBe('v2.new.resealed.x.y');
  });

  it("replacing an endpoint's sealed secret keeps its version (its pending deliveries go on)", async () => {
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env, { version: 3 });
    await s().transaction((tx) => tx.endpoints.insert(ep));
    expect(await s().transaction((tx) => tx.sealed.replace('endpoint-secret', ep.id, ep.secretEnc, 'v2.k2.a.b.c'))).toBe(true);
    expect(await s().read((tx) => tx.endpoints.get(env.id, ep.id))).toEqual({ ...ep, secretEnc: 'v2.k2.a.b.c' });
  });
}
