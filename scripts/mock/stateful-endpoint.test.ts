// `npm run mock -- --stateful` with MOCK_ENDPOINT_URL and MOCK_ENDPOINT_SECRET, run as a developer
// runs it, without --state: tenant 1's test endpoint is at that URL, signed with that secret, at
// every start, so a frontend's receiver keeps its configuration across restarts. A malformed
// secret, a secret without a URL and a URL the destination checks refuse are one line and exit
// status 2; the stateless mock says in one line that it ignores them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { freePort } from '../../server/testing/child-server.ts';
import { generateSecret } from '../../signing/signature.ts';
import { until } from '../../testing/until.ts';
import { ROOT } from '../lib/specs.ts';
import { ENDPOINT_SETTINGS, USAGE, statelessWarning } from './cli.ts';
import type { MockTenant, TenantsFile } from './tenants.ts';
import { spawnMock } from './testing/spawn.ts';

const SECRET = generateSecret();
const received: Array<{ headers: Record<string, string>; body: Buffer }> = [];
let receiver: Server;
let hookUrl: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'mock-endpoint-'));
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Starts the mock with the pinned endpoint, creates an order with tenant 1's key, and answers its order.created as the receiver verified it. */
async function startAndDeliver(run: string): Promise<{ eventType: string; orderId: string; printed: string }> {
  const tenantsFile = path.join(dir, `tenants-${run}.json`);
  const mock = await spawnMock(['--stateful', '--tenants-file', tenantsFile, '--quiet'], { MOCK_ENDPOINT_URL: hookUrl, MOCK_ENDPOINT_SECRET: SECRET });
  try {
    const t = (JSON.parse(await readFile(tenantsFile, 'utf8')) as TenantsFile).tenants[0] as MockTenant;
    const created = await fetch(`${mock.url}/v2/orders`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash, 'content-type': 'application/json' },
      body: JSON.stringify({ merchantReference: `pinned-${run}`, amountMinor: 1250 }),
    });
    expect(created.status).toBe(201);
    const { orderId } = (await created.json()) as { orderId: string };
    const delivery = await until(
      () => received.find((r) => (JSON.parse(r.body.toString('utf8')) as { data?: { orderId?: string } }).data?.orderId === orderId),
      () => `the order.created of ${orderId} at ${hookUrl}; mock printed:\n${mock.printed()}`,
    );
    const verified = verifyWebhook<{ type: string; data: { orderId: string } }>({ rawBody: delivery.body, headers: delivery.headers, secrets: SECRET });
    return { eventType: verified.event.type, orderId: verified.event.data.orderId, printed: mock.printed() };
  } finally {
    expect(await mock.stop()).toBe(0);
  }
}

describe('npm run mock -- --stateful with MOCK_ENDPOINT_URL and MOCK_ENDPOINT_SECRET, without --state', () => {
  it('delivers to the pinned URL signed with the pinned secret, and again after a restart; the banner names the URL, never the secret', async () => {
    const first = await startAndDeliver('first');
    expect(first.eventType).toBe('order.created');
    expect(first.printed).toMatch(new RegExp(`^webhook endpoint of tenant 1 \\(test\\), pinned: ${hookUrl} \\(\\S+, service-signature\\), signed with MOCK_ENDPOINT_SECRET; created$`, 'm'));
    expect(first.printed).not.toContain(SECRET.slice('whsec_'.length));

    // A new temporary store: new tenants, the same endpoint secret.
    const second = await startAndDeliver('second');
    expect(second.eventType).toBe('order.created');
    expect(second.orderId).not.toBe(first.orderId);
    expect(second.printed).not.toContain(SECRET.slice('whsec_'.length));
  }, 120_000);
});

/** `npm run mock -- <args>` with these settings, to its end. */
function runMock(args: string[], env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('npm', ['run', '-s', 'mock', '--', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('bad MOCK_ENDPOINT_* settings', () => {
  it('refuses a malformed MOCK_ENDPOINT_SECRET with one line, without repeating it, exit 2', () => {
    const bad = 'whsec_not+a/secret+of+the+contract+form+at+all=';
    const r = runMock(['--stateful'], { MOCK_ENDPOINT_URL: 'http://127.0.0.1:3000/webhooks', MOCK_ENDPOINT_SECRET: bad });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'npm run mock: MOCK_ENDPOINT_SECRET is not a signing secret: whsec_ followed by 43 or 44 letters, digits, - or _ (e.g. whsec_$(openssl rand -hex 22))',
    ]);
    expect(r.stdout).toBe('');
  });

  it('refuses MOCK_ENDPOINT_SECRET without MOCK_ENDPOINT_URL with one line, exit 2', () => {
    const r = runMock(['--stateful'], { MOCK_ENDPOINT_SECRET: SECRET });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['npm run mock: MOCK_ENDPOINT_SECRET needs MOCK_ENDPOINT_URL, the URL of the endpoint to pin']);
  });

  it('refuses a URL the destination checks refuse (a private address) with one line naming the rule, exit 2', async () => {
    const r = runMock(['--stateful', '--port', String(await freePort()), '--quiet'], { MOCK_ENDPOINT_URL: 'http://10.1.2.3/hooks', MOCK_ENDPOINT_SECRET: SECRET });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'npm run mock: MOCK_ENDPOINT_URL is not an allowed destination: 10.1.2.3 is a private network address; the URL must point to a public IPv4 address',
    ]);
    expect(`${r.stdout}${r.stderr}`).not.toContain(SECRET);
  });
});

describe('the stateless mock and the docs', () => {
  it('has the stateless mock warn in one line that it ignores the endpoint settings', () => {
    expect(statelessWarning({})).toBeNull();
    expect(statelessWarning({ MOCK_ENDPOINT_URL: hookUrl, MOCK_ENDPOINT_SECRET: SECRET })).toBe(
      'npm run mock: MOCK_ENDPOINT_URL, MOCK_ENDPOINT_SECRET apply to --stateful only: ignored (the stateless mock keeps no webhook endpoint)',
    );
  });

  it('has --help and docs/mock.md name each endpoint setting', () => {
    const mockMd = readFileSync(path.join(ROOT, 'docs', 'mock.md'), 'utf8');
    for (const name of ENDPOINT_SETTINGS) {
      expect(USAGE, name).toContain(name);
      expect(mockMd, name).toContain(name);
    }
  });
});
