// `npm run mock -- --stateful --tenants 2` is the reference server's own code: payments-conformance
// api, its stateful and tenant-isolation checks included, passes against it with 0 failures, run
// as conformance-tests/api.test.ts runs it against the server, with the second tenant of the
// tenants file as the "other" tenant. The credentials a frontend's .env pins are the ones it
// serves; the server's settings pass through; `Prefer` is refused without writing anything; the
// mock-only webhooks work; each refusal is one line with its reason.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counts, idsWith, runTarget, startSink, type TargetRun } from '../../conformance-tests/testing/run.ts';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { until } from '../../testing/until.ts';
import { generateSecret } from '../../signing/signature.ts';
import { startStatefulMock } from './stateful.ts';
import type { MockTenant, TenantsFile } from './tenants.ts';
import { spawnMock, type SpawnedMock } from './testing/spawn.ts';

const PINNED = { MOCK_API_KEY: 'pk_test_frontend_env', MOCK_API_HASH: 'sk_test_frontend_env_0123456789abcdefghij', MOCK_TENANT_ID: 'ten_frontend_env' };
const WEBHOOK_SECRET = generateSecret();
let mock: SpawnedMock;
let dir: string;
let file: TenantsFile;
let sink: Awaited<ReturnType<typeof startSink>>;
let run: TargetRun;

/** The api target's arguments for tenant `a`, with `b` as the other tenant: as apiArgs, from the tenants file. */
function apiArgsOf(url: string, a: MockTenant, b: MockTenant, webhookUrl: string): string[] {
  const options = {
    'base-url': url,
    'api-key': a.apiKey,
    'api-hash': a.apiHash,
    'tenant-id': a.tenantId,
    'member-token': a.memberToken,
    'other-api-key': b.apiKey,
    'other-api-hash': b.apiHash,
    'other-tenant-id': b.tenantId,
    'limited-api-key': a.noPermissionKey.apiKey,
    'limited-api-hash': a.noPermissionKey.apiHash,
    'live-api-key': a.liveKey?.apiKey ?? '',
    'live-api-hash': a.liveKey?.apiHash ?? '',
    'refund-email': a.refundEmail,
    'webhook-url': webhookUrl,
    seed: '20261122',
  };
  return ['api', ...Object.entries(options).flatMap(([k, v]) => [`--${k}`, v]), '--quiet'];
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'mock-stateful-'));
  const tenantsFile = path.join(dir, 'tenants.json');
  // As the bundled server's api test runs: the retry schedule scaled down (a passed-through setting).
  mock = await spawnMock(['--stateful', '--tenants', '2', '--tenants-file', tenantsFile, '--quiet'], { ...PINNED, MOCK_WEBHOOK_SECRET: WEBHOOK_SECRET, WEBHOOK_RETRY_SCALE: '0.0001' });
  file = JSON.parse(await readFile(tenantsFile, 'utf8')) as TenantsFile;
  sink = await startSink();
  const [a, b] = file.tenants as [MockTenant, MockTenant];
  run = await runTarget(apiArgsOf(mock.url, a, b, sink.url));
  console.log(`api target against npm run mock -- --stateful --tenants 2: ${counts(run.report)}`);
}, 300_000);

afterAll(async () => {
  await mock?.stop();
  await sink?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm run mock -- --stateful --tenants 2', () => {
  it('passes payments-conformance api with the second tenant as the other: 0 failures, isolation checks included', () => {
    expect(idsWith(run.report, 'failed'), run.output).toEqual([]);
    expect(idsWith(run.report, 'not_implemented')).toEqual([]);
    expect(run.exitCode).toBe(0);
    const isolation = run.report.checks.filter((c) => c.id.startsWith('api.rules.isolation.'));
    expect(isolation.length).toBeGreaterThan(0);
    expect(isolation.filter((c) => c.status !== 'passed').map((c) => c.id)).toEqual([]);
    // Only what a fresh environment cannot have, as against the server: a failed delivery.
    expect(idsWith(run.report, 'skipped')).toEqual(['api.retryDelivery.succeeds']);
  });

  it('writes each tenant to the tenants file with its keys, members and refund e-mail; the first has the pinned credentials', () => {
    expect(file.baseUrl).toBe(mock.url);
    expect(file.tenants).toHaveLength(2);
    expect(file.tenants[0]).toMatchObject({ tenantId: PINNED.MOCK_TENANT_ID, apiKey: PINNED.MOCK_API_KEY, apiHash: PINNED.MOCK_API_HASH });
    for (const t of file.tenants) {
      expect(t.readOnlyKey.permissions.sort()).toEqual(['orders_read', 'transactions_read']);
      expect(t.noPermissionKey.permissions).toEqual([]);
      expect(t.liveKey?.apiKey).toMatch(/^pk_live_/);
      expect(t.viewerMemberToken).toMatch(/^mt_/);
      expect(t.refundEmail).toContain('@');
    }
    expect(mock.printed()).toContain(`tenants file: ${path.join(dir, 'tenants.json')} (2 tenants`);
  });

  it('serves the viewer read-only and the read-only key without writes', async () => {
    const t = file.tenants[0] as MockTenant;
    const viewer = await fetch(`${mock.url}/v2/webhooks/endpoints?environment=test`, { headers: { authorization: `Bearer ${t.viewerMemberToken}` } });
    expect(viewer.status).toBe(200);
    const headers = { 'x-api-key': t.readOnlyKey.apiKey, 'x-api-hash': t.readOnlyKey.apiHash, 'content-type': 'application/json' };
    const write = await fetch(`${mock.url}/v2/orders`, { method: 'POST', headers, body: JSON.stringify({ merchantReference: 'read-only', amountMinor: 100 }) });
    expect(write.status).toBe(403);
  });

  it('refuses Prefer code= with 400 naming /header/prefer and writes nothing; the refusal is one line with its reason', async () => {
    const t = file.tenants[0] as MockTenant;
    const headers = { 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash, 'content-type': 'application/json' };
    const body = JSON.stringify({ thirdPartyId: 'prefer-409', userId: 'user_5521', amount: 1 });
    const refused = await fetch(`${mock.url}/transactions/payout`, { method: 'POST', headers: { ...headers, prefer: 'code=409' }, body });
    const problem = (await refused.json()) as { type: string; errors: Array<{ pointer: string }> };
    expect(refused.status).toBe(400);
    expect(problem.type).toBe('https://errors.payments.example/validation-failed');
    expect(problem.errors.map((e) => e.pointer)).toEqual(['/header/prefer']);
    await mock.printedLine(/^refused POST \/transactions\/payout: 400 validation-failed .*stateful mock does not honour Prefer code=409/m);
    // Nothing was written: the same payout without Prefer is a first one (201), not a duplicate.
    expect((await fetch(`${mock.url}/transactions/payout`, { method: 'POST', headers, body })).status).toBe(201);
  });

  it('sends POST /_mock/webhooks as the stateless mock does, signed with MOCK_WEBHOOK_SECRET', async () => {
    const received: Array<{ headers: Record<string, string>; body: Buffer }> = [];
    const receiver: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const to = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const res = await fetch(`${mock.url}/_mock/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event: 'order.paid', to }) });
    expect(((await res.json()) as { status: number }).status).toBe(200);
    await until(() => received.length === 1, 'the mocked order.paid');
    const r = received[0] as { headers: Record<string, string>; body: Buffer };
    expect(verifyWebhook<{ type: string }>({ rawBody: r.body, headers: r.headers, secrets: WEBHOOK_SECRET }).event.type).toBe('order.paid');
    receiver.close();
  });
});

describe('startStatefulMock', () => {
  it('has a request that arrives before the store is open wait for it, then answers it', async () => {
    let early: Promise<Response> | null = null;
    const m = await startStatefulMock({ port: 0, listening: (url) => (early = fetch(`${url}/healthz`)) });
    try {
      expect(early).not.toBeNull();
      expect((await (early as unknown as Promise<Response>)).status).toBe(200);
    } finally {
      await m.close();
    }
  });
});
