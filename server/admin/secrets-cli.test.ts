// Rotating the sealing key as an operator does it (docs/operations.md "Rotating the sealing
// key"), on both stores: values sealed by the one key of before; a ring with a new key first;
// `npm run admin -- secrets reseal`; then the old key removed from the ring, and every
// delivery still signs so that the merchant's unchanged secret verifies it. On SQLite the ring
// is in DATA_DIR/secrets.key (the stateful mock's --state folder); on PostgreSQL in SECRETS_KEY.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { deliveryHeaders } from '../../signing/delivery.ts';
import { loadConfig } from '../config.ts';
import { createTenant } from '../domain/admin.ts';
import { rotateCallbackSecret } from '../domain/endpoints/callback-secret.ts';
import { createEndpoint } from '../domain/endpoints/endpoints.ts';
import { resealSecrets } from '../domain/secrets-rotation.ts';
import { IMPLICIT_KEY_ID } from '../domain/secrets.ts';
import type { Store } from '../domain/store.ts';
import { openServices } from '../services.ts';
import { deliveryRecord, eventRecord } from '../store/suite/fixtures.ts';
import { createTestDatabase } from '../store/postgres/testing.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const OLD = randomBytes(32).toString('base64url');
const NEW = randomBytes(32).toString('base64url');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Where the ring is set: SECRETS_KEY, or the data folder's secrets.key. */
interface Deployment {
  env: NodeJS.ProcessEnv;
  setRing(ring: string): Promise<NodeJS.ProcessEnv>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function deployment(store: 'sqlite' | 'postgres'): Promise<Deployment> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'admin-secrets-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const base = { DATA_DIR: dataDir, WEBHOOK_ALLOW_INSECURE_URLS: 'true' };
  if (store === 'sqlite') {
    return {
      env: base,
      async setRing(ring) {
        await writeFile(path.join(dataDir, 'secrets.key'), `${ring}\n`, { mode: 0o600 });
        return base;
      },
    };
  }
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  const env = { ...base, DATABASE_URL: db.url };
  return { env, setRing: async (ring) => ({ ...env, SECRETS_KEY: ring }) };
}

async function admin(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT, 'server/admin/cli.ts'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      timeout: 25_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const open = async (env: NodeJS.ProcessEnv) => (await openServices(loadConfig(env), pino({ level: 'silent' }))).services;

describe.each(['sqlite', 'postgres'] as const)('npm run admin -- secrets reseal (%s)', (store) => {
  it('after a reseal the old key leaves the ring and every delivery still verifies with the merchant’s unchanged secret', { timeout: 120_000 }, async () => {
    const d = await deployment(store);
    // Before: one key, no id (the form every deployment has today).
    const before = await open(await d.setRing(OLD));
    const tenant = await createTenant(before, { name: 'Northwind' });
    const testEnv = await before.store.read((tx) => tx.tenants.findEnvironment(tenant.tenantId, 'test'));
    if (!testEnv) throw new Error('no test environment');
    const created = await createEndpoint(before, { tenantId: tenant.tenantId, environmentId: testEnv.id, environment: 'test' }, { url: 'http://127.0.0.1:9/hooks' });
    const endpoint = await before.store.read((tx) => tx.endpoints.get(testEnv.id, created.endpoint.id));
    if (!endpoint) throw new Error('no endpoint');
    const event = eventRecord(testEnv);
    await before.store.transaction(async (tx) => {
      await tx.events.insert(event);
      await tx.deliveries.insert(deliveryRecord(event, endpoint));
      await tx.deliveries.insert(deliveryRecord(event, null));
    });
    await before.store.close();

    // A ring without the key that sealed them: refused, naming the key id, never a key.
    const refused = await admin(await d.setRing(`k2:${NEW}`), 'secrets', 'status');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`sealed by key id ${IMPLICIT_KEY_ID}, which SECRETS_KEY does not hold`);
    for (const k of [OLD, NEW]) expect(refused.stderr + refused.stdout).not.toContain(k);

    // The new key first, the old one after it; re-seal in batches of one.
    const ringEnv = await d.setRing(`k2:${NEW},${OLD}`);
    const resealed = await admin(ringEnv, 'secrets', 'reseal', '--batch', '1');
    expect(resealed.stderr).toBe('');
    // Two callback secrets (test, live) and one endpoint secret.
    expect(JSON.parse(resealed.stdout)).toEqual({ newestKeyId: 'k2', resealed: 3, changedMeanwhile: 0, batches: 3, sealedBy: { k2: 3, [IMPLICIT_KEY_ID]: 0 } });
    for (const k of [OLD, NEW]) expect(resealed.stdout).not.toContain(k);
    // Resumable: a second pass finds nothing left.
    const again = await open(ringEnv);
    expect(await resealSecrets(again, { batch: 1 })).toEqual({ newestKeyId: 'k2', resealed: 0, changedMeanwhile: 0, batches: 0, sealedBy: { k2: 3, [IMPLICIT_KEY_ID]: 0 } });
    await again.store.close();

    // The old key removed: the service starts, and signs every delivery so that it verifies.
    const newOnly = await d.setRing(`k2:${NEW}`);
    const status = await admin(newOnly, 'secrets', 'status');
    expect(JSON.parse(status.stdout)).toEqual({ newestKeyId: 'k2', sealedBy: { k2: 3 } });
    const after = await open(newOnly);
    cleanups.push(() => after.store.close());
    const claimed = await after.store.queue.claim({ owner: 'w', now: Date.now(), leaseMs: 30_000, limit: 10, perEndpointLimit: 4 });
    expect(claimed.map((c) => c.delivery.kind).sort()).toEqual(['order_event', 'payout_callback']);
    const t = Math.floor(Date.now() / 1000);
    for (const c of claimed) {
      expect(c.secretEnc.startsWith('v2.k2.')).toBe(true);
      const body = JSON.stringify({ id: c.event.id, type: c.event.type });
      const headers = deliveryHeaders(after.secrets.open(c.secretEnc), c.event.id, body, t, c.signatureScheme);
      const merchantSecret = c.delivery.kind === 'order_event' ? created.secret : tenant.callbackSecret;
      expect(verifyWebhook({ rawBody: body, headers, secrets: merchantSecret, now: () => t * 1000 }).event).toEqual({ id: c.event.id, type: c.event.type });
    }
  });
});

describe('the re-seal pass beside a running service', () => {
  it('a secret a merchant rotates between the pass’s read and its write is left as the rotation wrote it', { timeout: 60_000 }, async () => {
    const d = await deployment('sqlite');
    const before = await open(await d.setRing(OLD));
    const tenant = await createTenant(before, { name: 'Northwind' });
    await before.store.close();
    const services = await open(await d.setRing(`k2:${NEW},${OLD}`));
    cleanups.push(() => services.store.close());
    const testEnv = await services.store.read((tx) => tx.tenants.findEnvironment(tenant.tenantId, 'test'));
    if (!testEnv) throw new Error('no test environment');
    // The merchant's rotation commits just before the pass's first batch, after its page was read.
    let rotated: string | null = null;
    const store = new Proxy(services.store, {
      get(target, prop) {
        if (prop === 'transaction') {
          return async (...args: Parameters<Store['transaction']>) => {
            rotated ??= (await rotateCallbackSecret(services, { tenantId: tenant.tenantId, environmentId: testEnv.id, environment: 'test' })).secret;
            return target.transaction(...args);
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const report = await resealSecrets({ store, secrets: services.secrets }, { batch: 10 });
    expect(report).toEqual({ newestKeyId: 'k2', resealed: 1, changedMeanwhile: 1, batches: 1, sealedBy: { k2: 2, [IMPLICIT_KEY_ID]: 0 } });
    const after = await services.store.read((tx) => tx.tenants.getEnvironment(testEnv.id));
    expect(rotated).not.toBeNull();
    expect(services.secrets.open(after?.callbackSecretEnc ?? '')).toBe(rotated);
  });
});
