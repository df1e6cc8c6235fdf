// `npm run mock`, started as the README says, is the contract's stand-in: the conformance
// suite's stateless checks all pass on its one base URL, invalid requests get the contract's
// own errors, and its webhooks and payout callbacks are signed as production signs them.
import { spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../client/webhooks/index.ts';
import { openMerchantStore, type MerchantStore } from '../client/examples/merchant-receiver/store.ts';
import { CALLBACK_PATH, WEBHOOK_PATH, createMerchantReceiver, type MerchantReceiver } from '../client/examples/merchant-receiver/receiver.ts';
import { counts, runTarget } from '../conformance-tests/testing/run.ts';
import { compileOperation, loadDocument, loadOperations } from '../server/contract/operations.ts';
import { generateSecret } from '../signing/signature.ts';
import { GENERATED_DIR, ROOT } from './lib/specs.ts';
import { spawnMock, type SpawnedMock } from './mock/testing/spawn.ts';
import { mockEvents } from './mock/webhooks.ts';
import { until } from '../testing/until.ts';

const createPayout = compileOperation(loadOperations('transactions').find((o) => o.operationId === 'createPayout')!);
const CREDS = { 'x-api-key': 'pk_test_mock', 'x-api-hash': 'sk_test_mock' };
const JSON_HEADERS = { 'content-type': 'application/json', ...CREDS };
const WEBHOOK_SECRET = generateSecret();
const CALLBACK_SECRET = generateSecret();

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
}

let mock: SpawnedMock;
let base = '';

/** `npm run mock -- --quiet`, ready once its banner is printed. */
async function startNpmRunMock(): Promise<void> {
  mock = await spawnMock(['--quiet'], { MOCK_WEBHOOK_SECRET: WEBHOOK_SECRET, MOCK_CALLBACK_SECRET: CALLBACK_SECRET });
  base = mock.url;
}

/** A loopback receiver that keeps every request's raw bytes and headers. */
function startCapture(): Promise<{ server: Server; url: string; next(): Promise<Received> }> {
  const waiting: Array<(r: Received) => void> = [];
  const queue: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, rawBody: Buffer.concat(chunks) };
      const waiter = waiting.shift();
      if (waiter) waiter(r);
      else queue.push(r);
      res.end('ok');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({ server, url, next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((r) => waiting.push(r))) });
    }),
  );
}

/** What a Stripe-style receiver does by hand: HMAC-SHA256 of `<t>.<raw body>` keyed with the secret, hex, constant-time compare. */
function stripeStyleVerify(r: Received, secret: string): boolean {
  const header = String(r.headers['service-signature']);
  const parts = Object.fromEntries(header.split(',').map((kv) => kv.split('=') as [string, string]));
  const expected = createHmac('sha256', secret).update(`${parts.t}.`).update(r.rawBody).digest();
  const given = Buffer.from(parts.v1 ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) && Math.abs(Date.now() / 1000 - Number(parts.t)) <= 300;
}

let capture: Awaited<ReturnType<typeof startCapture>>;
let dir: string;
let store: MerchantStore;
let receiver: MerchantReceiver;
let receiverServer: ServerType;
let receiverUrl = '';

beforeAll(async () => {
  await startNpmRunMock();
  capture = await startCapture();
  dir = mkdtempSync(path.join(os.tmpdir(), 'mock-receiver-'));
  store = openMerchantStore(path.join(dir, 'merchant.db'));
  // The example merchant receiver, reading the current order from the mock itself.
  receiver = createMerchantReceiver({ secrets: [WEBHOOK_SECRET], callbackSecrets: [CALLBACK_SECRET], store, ordersApi: { baseUrl: base, apiKey: CREDS['x-api-key'], apiHash: CREDS['x-api-hash'] } });
  await new Promise<void>((resolve) => {
    receiverServer = serve({ fetch: receiver.app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      receiverUrl = `http://127.0.0.1:${info.port}`;
      resolve();
    });
  });
}, 60_000);

afterAll(async () => {
  await mock?.stop();
  capture?.server.close();
  await new Promise<void>((resolve) => (receiverServer ? receiverServer.close(() => resolve()) : resolve()));
  await receiver?.idle();
  store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('npm run mock', () => {
  it('prints its one base URL and the paths of every document the server serves', () => {
    for (const line of ['POST   /transactions/payout', 'GET    /v2/orders/{orderId}', 'POST   /v2/webhooks/endpoints', 'POST   /sandbox/payments', 'POST   /_mock/webhooks']) {
      expect(mock.printed()).toContain(line);
    }
  });

  it('passes every stateless check of payments-conformance api --skip-stateful on that URL; what a mock cannot answer is not reached, with its reason', async () => {
    const run = await runTarget(['api', '--base-url', base, ...Object.entries({ 'api-key': CREDS['x-api-key'], 'api-hash': CREDS['x-api-hash'], 'tenant-id': 'ten_8f3k2m9q4w' }).flatMap(([k, v]) => [`--${k}`, v]), '--skip-stateful', '--quiet']);
    console.log(`api target against npm run mock: ${counts(run.report)}`);
    const failed = run.report.checks.filter((c) => c.status === 'failed').map((c) => `${c.id}: ${c.failure?.message}`);
    expect(failed, run.output).toEqual([]);
    expect(run.exitCode).toBe(0);
    // Every operation of the four documents is served (none is "not implemented") and succeeds.
    expect(run.report.totals.not_implemented).toBe(0);
    for (const api of ['transactions', 'orders', 'management', 'sandbox'] as const) {
      for (const op of loadOperations(api)) expect(run.report.checks.find((c) => c.id === `api.${op.operationId}.succeeds`)?.status, op.operationId).toBe('passed');
    }
    const skipped = run.report.checks.filter((c) => c.status === 'skipped');
    expect(skipped.length).toBeGreaterThan(0);
    for (const c of skipped) expect(c.reason, c.id).toMatch(/\S/);
  }, 60_000);

  it('answers an invalid payout 400 validation-failed naming /body/thirdPartyId, never a documented example', async () => {
    const res = await fetch(`${base}/transactions/payout`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ userId: 'user_5521', amount: 150.25 }) });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as { type: string; errors: Array<{ pointer: string }> };
    expect(problem.type).toBe('https://errors.payments.example/validation-failed');
    expect(problem.errors.map((e) => e.pointer)).toEqual(['/body/thirdPartyId']);
    expect(createPayout.validateResponse(400, res.headers.get('content-type'), problem)).toEqual([]);
    // The refusal is one line of the mock's log, with its reason, even under --quiet.
    await mock.printedLine(/^refused POST \/transactions\/payout: 400 validation-failed .*\/body\/thirdPartyId/m);
  });

  it('says in one line that its port is in use and exits 1', async () => {
    const second = spawn('npm', ['run', 'mock', '--', '--quiet'], { cwd: ROOT, env: { ...process.env, MOCK_PORT: new URL(base).port }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    second.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise((resolve) => second.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([`npm run mock: cannot listen on 127.0.0.1:${new URL(base).port}: the port is in use; stop what listens there or set MOCK_PORT to another port`]);
  }, 30_000);

  it('answers the body rules and the x-decimal rule as the server does (415, 400 malformed-json, 413, 400 naming /body/amount)', async () => {
    const post = (body: string, contentType = 'application/json'): Promise<Response> =>
      fetch(`${base}/transactions/payout`, { method: 'POST', headers: { ...CREDS, 'content-type': contentType }, body });
    const valid = JSON.stringify({ thirdPartyId: 'mock-body', userId: 'user_5521', amount: 1 });
    const slug = async (res: Response): Promise<string> => `${res.status} ${((await res.json()) as { type: string }).type.split('/').pop()}`;
    expect(await slug(await post(valid, 'text/plain'))).toBe('415 unsupported-media-type');
    expect(await slug(await post(valid.slice(0, -1)))).toBe('400 malformed-json');
    expect(await slug(await post(`{"padding":"${'x'.repeat(70_000)}"}`))).toBe('413 payload-too-large');
    const precise = await post(JSON.stringify({ thirdPartyId: 'mock-body', userId: 'user_5521', amount: 1.123456789 }));
    expect(((await precise.json()) as { errors: Array<{ pointer: string }> }).errors.map((e) => e.pointer)).toEqual(['/body/amount']);
  });

  it('answers a valid payout with its documented 201 example, another documented answer on Prefer, and 401 without credentials', async () => {
    const body = JSON.stringify({ thirdPartyId: 'mock-1', userId: 'user_5521', amount: 10.5 });
    const ok = await fetch(`${base}/transactions/payout`, { method: 'POST', headers: JSON_HEADERS, body });
    expect(ok.status).toBe(201);
    expect(createPayout.validateResponse(201, ok.headers.get('content-type'), await ok.json())).toEqual([]);
    const dup = await fetch(`${base}/transactions/payout`, { method: 'POST', headers: { ...JSON_HEADERS, prefer: 'code=409' }, body });
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as { type: string }).type).toBe('https://errors.payments.example/duplicate-third-party-id');
    const anonymous = await fetch(`${base}/transactions/payout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { type: string }).type).toBe('https://errors.payments.example/unauthenticated');
  });

  it('sends a mocked order.paid, signed as production signs it, that verifyWebhook, a Stripe-style check and the example receiver accept', async () => {
    const send = (to: string, extra: Record<string, unknown> = {}): Promise<Response> =>
      fetch(`${base}/_mock/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event: 'order.paid', to, ...extra }) });
    const sent = (await (await send(`${capture.url}/hook`)).json()) as { status: number; eventId: string };
    expect(sent.status).toBe(200);
    const r = await capture.next();
    const verified = verifyWebhook<{ type: string; id: string }>({ rawBody: r.rawBody, headers: r.headers as Record<string, string>, secrets: WEBHOOK_SECRET });
    expect(verified.event.type).toBe('order.paid');
    expect(verified.eventId).toBe(sent.eventId);
    expect(stripeStyleVerify(r, WEBHOOK_SECRET)).toBe(true);
    expect(stripeStyleVerify(r, generateSecret())).toBe(false);

    // The example receiver, with a secret passed in the call; it then reads the order from the mock.
    const passed = (await (await send(`${receiverUrl}${WEBHOOK_PATH}`, { newId: true })).json()) as { status: number; eventId: string };
    expect(passed.status).toBe(200);
    expect(store.hasEvent(passed.eventId)).toBe(true);
    await receiver.idle();
  });

  it('sends an event from the command line: npm run mock -- send', async () => {
    const cli = spawn('npm', ['run', 'mock', '--', 'send', 'order.created', '--example', 'orderCreatedMinimal', '--to', `${capture.url}/cli`, '--secret', 'env:CLI_SECRET'], {
      cwd: ROOT,
      env: { ...process.env, CLI_SECRET: WEBHOOK_SECRET },
      stdio: 'ignore',
    });
    const [r, code] = await Promise.all([capture.next(), new Promise((resolve) => cli.once('exit', resolve))]);
    expect(code).toBe(0);
    expect(r.path).toBe('/cli');
    const verified = verifyWebhook({ rawBody: r.rawBody, headers: r.headers as Record<string, string>, secrets: WEBHOOK_SECRET });
    const documented = mockEvents().find((e) => e.name === 'order.created')!.examples.find((x) => x.name === 'orderCreatedMinimal')!.payload;
    expect(verified.event).toEqual(documented);
  }, 30_000);

  it('calls a payout notifyUrl through Prism with the payout-completed callback, signed with the callback secret', async () => {
    const res = await fetch(`${base}/transactions/payout`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ thirdPartyId: 'mock-cb', userId: 'user_5521', amount: 1, notifyUrl: `${capture.url}/payouts/completed` }),
    });
    expect(res.status).toBe(201);
    const r = await capture.next();
    expect(r.path).toBe('/payouts/completed');
    const verified = verifyWebhook({ rawBody: r.rawBody, headers: r.headers as Record<string, string>, secrets: CALLBACK_SECRET });
    expect(verified.eventId).toMatch(/^[0-9a-f]{64}$/);
    // Prism picks one of the callback's documented examples.
    expect(mockEvents().find((e) => e.name === 'payout.completed')!.examples.map((x) => x.payload)).toContainEqual(verified.event);
    expect(stripeStyleVerify(r, CALLBACK_SECRET)).toBe(true);

    // And into the example receiver's callback route.
    const before = store.eventCount();
    const again = await fetch(`${base}/transactions/payout`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ thirdPartyId: 'mock-cb-2', userId: 'user_5521', amount: 1, notifyUrl: `${receiverUrl}${CALLBACK_PATH}` }),
    });
    expect(again.status).toBe(201);
    await until(() => store.eventCount() !== before, 'the callback in the receiver');
    expect(store.eventCount()).toBe(before + 1);
  });

  it('models the callback from the AsyncAPI message: the OpenAPI callback examples are its examples', () => {
    const op = (loadDocument('transactions').paths as Record<string, Record<string, { callbacks: Record<string, Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, { value: unknown }> }> } } }>> }>>)['/transactions/payout']!.post!;
    const callback = op.callbacks.payoutCompleted!['{$request.body#/notifyUrl}']!.post;
    const inOpenApi = Object.entries(callback.requestBody.content['application/json']!.examples).map(([name, e]) => [name, e.value]);
    const asyncapi = JSON.parse(readFileSync(path.join(GENERATED_DIR, 'asyncapi', 'webhooks.json'), 'utf8')) as { components: { messages: Record<string, { examples: Array<{ name: string; payload: unknown }> }> } };
    expect(inOpenApi).toEqual(asyncapi.components.messages.payoutCompleted!.examples.map((e) => [e.name, e.payload]));
  });
});
