// npm run admin -- member passkeys list|revoke and member sessions end, run as the operator runs it, on an embedded store.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { newPasskeyId } from '../domain/ids.ts';
import { hashToken } from '../domain/secrets.ts';
import { openServices } from '../services.ts';
import { childEntry } from '../testing/server-bundle.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let dataDir: string;

const admin = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir };
  try {
    // The run's bundle of the admin tool: what `npm run admin` runs.
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...childEntry('server/admin/cli.ts'), ...args], { cwd: ROOT, env, timeout: 25_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
};

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'admin-passkeys-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe('npm run admin -- member passkeys', () => {
  it('lists a member’s passkeys without their keys, and revokes one or all', { timeout: 90_000 }, async () => {
    const tenant = JSON.parse((await admin('tenant', 'create', '--name', 'Acme')).stdout) as { tenantId: string; memberToken: string };
    const { services } = await openServices(loadConfig({ DATA_DIR: dataDir }), pino({ level: 'silent' }));
    const member = await services.store.read((tx) => tx.tenants.getMemberByTokenHash(hashToken(tenant.memberToken)));
    const memberId = member?.id ?? '';
    const record = (name: string) => ({
      id: newPasskeyId(),
      tenantId: tenant.tenantId,
      memberId,
      credentialId: `cred-${name}`,
      name,
      publicKey: `public-key-of-${name}`,
      counter: 0,
      transports: ['internal'],
      multiDevice: true,
      backedUp: true,
      createdAt: Date.UTC(2026, 10, 22),
      lastUsedAt: null,
    });
    const [phone, laptop] = [record('Phone'), record('Laptop')];
    await services.store.transaction(async (tx) => {
      await tx.passkeys.insert(phone);
      await tx.passkeys.insert(laptop);
    });
    await services.store.close();

    const listed = await admin('member', 'passkeys', 'list', '--tenant', tenant.tenantId, '--member', memberId);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({
      memberId,
      passkeys: [phone, laptop].sort((a, b) => a.id.localeCompare(b.id)).map((p) => ({ passkeyId: p.id, name: p.name, createdAt: '2026-11-22T00:00:00.000Z', lastUsedAt: null, backedUp: true })),
    });
    expect(listed.stdout).not.toContain('public-key-of');

    expect((await admin('member', 'passkeys', 'revoke', '--tenant', tenant.tenantId, '--member', memberId)).code).toBe(2);
    expect(JSON.parse((await admin('member', 'passkeys', 'revoke', '--tenant', tenant.tenantId, '--member', memberId, '--passkey', phone.id)).stdout)).toEqual({ memberId, revoked: 1 });
    const wrongTenant = await admin('member', 'passkeys', 'revoke', '--tenant', 'ten_other', '--member', memberId, '--all');
    expect(wrongTenant.code).toBe(1);
    expect(wrongTenant.stderr).toContain(`No member ${memberId} in tenant ten_other`);
    expect(JSON.parse((await admin('member', 'passkeys', 'revoke', '--tenant', tenant.tenantId, '--member', memberId, '--all')).stdout)).toEqual({ memberId, revoked: 1 });
    expect(JSON.parse((await admin('member', 'passkeys', 'list', '--tenant', tenant.tenantId, '--member', memberId)).stdout).passkeys).toEqual([]);
  });

  it('member sessions end: bumps the member’s session epoch; another tenant’s id is refused', { timeout: 90_000 }, async () => {
    const tenant = JSON.parse((await admin('tenant', 'create', '--name', 'Sessions')).stdout) as { tenantId: string; memberToken: string };
    const epoch = async () => {
      const { services } = await openServices(loadConfig({ DATA_DIR: dataDir }), pino({ level: 'silent' }));
      const member = await services.store.read((tx) => tx.tenants.getMemberByTokenHash(hashToken(tenant.memberToken)));
      await services.store.close();
      return { memberId: member?.id ?? '', epoch: member?.sessionEpoch };
    };
    const before = await epoch();
    expect(before.epoch).toBe(0);
    const ended = await admin('member', 'sessions', 'end', '--tenant', tenant.tenantId, '--member', before.memberId);
    expect(ended.code).toBe(0);
    expect(JSON.parse(ended.stdout)).toEqual({ memberId: before.memberId, sessionsEnded: true });
    expect((await epoch()).epoch).toBe(1);
    const wrongTenant = await admin('member', 'sessions', 'end', '--tenant', 'ten_other', '--member', before.memberId);
    expect(wrongTenant.code).toBe(1);
    expect(wrongTenant.stderr).toContain(`No member ${before.memberId} in tenant ten_other`);
  });
});
