// No secret in any log line, metric or error body: a run through the real server with the
// production logger at trace level captures every log line, every error body and a /metrics
// scrape, then greps them for every API hash, member token, callback secret and webhook
// signing secret the run created or used, and fails on one.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { until } from '../../testing/until.ts';

const METRICS_TOKEN = 'secrets-leak-metrics-token-0123456789';
const lines: string[] = [];
const errorBodies: string[] = [];
const secrets = new Map<string, string>();

let server: TestServer;
let tenant: TestTenant;
let receiver: Server;
let receiverUrl: string;
let receiverCalls = 0;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    // First attempt fails (logged with the answer), later ones succeed.
    req.on('end', () => res.writeHead(receiverCalls++ === 0 ? 500 : 200).end('{"echo":"receiver body"}'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const capture = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  server = await startTestServer({ log: createLogger('trace', capture), env: { METRICS_TOKEN } });
  tenant = await server.newTenant();
  secrets.set('apiHash', tenant.apiHash);
  secrets.set('memberToken', tenant.memberToken);
  secrets.set('callbackSecret', tenant.callbackSecret);
  secrets.set('metricsToken', METRICS_TOKEN);
});
afterAll(async () => {
  await server?.close();
  receiver?.closeAllConnections();
  receiver?.close();
});

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  const r = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  if (r.status >= 400) errorBodies.push(text);
  return new Response(text, { status: r.status, headers: r.headers });
}


describe('secrets never leak', () => {
  it('into log lines, metrics or error bodies', async () => {
    const key = { 'x-api-key': tenant.apiKey, 'x-api-hash': tenant.apiHash };
    const member = { authorization: `Bearer ${tenant.memberToken}` };
    // Successes, and refusals of every kind with the secrets in the request.
    expect((await call('POST', '/transactions/payout', key, { thirdPartyId: 'leak-1', userId: 'u', amount: 1 })).status).toBe(201);
    await call('POST', '/transactions/payout', key, { thirdPartyId: 'leak-1', userId: 'u', amount: 1 });
    await call('POST', '/transactions/payout', { ...key, 'x-api-hash': `${tenant.apiHash.slice(0, -1)}x` }, { thirdPartyId: 'leak-2', userId: 'u', amount: 1 });
    await call('POST', '/transactions/payout', key, `{"thirdPartyId":"x","apiHash":"${tenant.apiHash}",`);
    await call('POST', '/transactions/payout', key, { thirdPartyId: 'leak-3', userId: 'u', amount: 'lots' });
    await call('GET', `/transactions/users?userId=${encodeURIComponent(tenant.apiHash)}&limit=0`, key);
    await call('GET', '/v2/webhooks/endpoints', { authorization: `Bearer ${tenant.memberToken}x` });
    await call('GET', '/v2/webhooks/endpoints', { authorization: `Token ${tenant.memberToken}` });
    await call('GET', '/no/such/route', { ...key, ...member });

    // A webhook endpoint: its secret (shown once), a rotation, a test delivery failing then delivered.
    const created = await call('POST', '/v2/webhooks/endpoints', member, { url: receiverUrl });
    expect(created.status).toBe(201);
    const endpoint = (await created.json()) as { id: string; secret: string };
    secrets.set('endpointSecret', endpoint.secret);
    await call('POST', '/v2/webhooks/endpoints', member, { url: receiverUrl });
    const rotated = await call('POST', `/v2/webhooks/endpoints/${endpoint.id}/rotate-secret`, member);
    if (rotated.status < 300) {
      const r = (await rotated.json()) as { secret?: string };
      if (r.secret) secrets.set('rotatedSecret', r.secret);
    }
    const cb = await call('POST', '/v2/webhooks/callback-secret/rotate', member);
    if (cb.status < 300) {
      const r = (await cb.json()) as { callbackSecret?: string; secret?: string };
      const s = r.callbackSecret ?? r.secret;
      if (s) secrets.set('rotatedCallbackSecret', s);
    }
    await call('POST', `/v2/webhooks/endpoints/${endpoint.id}/test`, member);
    await until(() => receiverCalls >= 1, 'the test webhook at the receiver', 5_000);
    await call('POST', '/transactions/payout', key, { thirdPartyId: 'leak-4', userId: 'u', amount: 1, notifyUrl: `${receiverUrl}?token=${tenant.callbackSecret}` });

    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    await call('GET', '/metrics', { authorization: `Bearer ${METRICS_TOKEN}x` });

    expect(lines.length).toBeGreaterThan(10);
    expect(errorBodies.length).toBeGreaterThan(5);
    const haystacks: Record<string, string> = { logs: lines.join('\n'), metrics, errorBodies: errorBodies.join('\n') };
    const leaks: string[] = [];
    for (const [where, text] of Object.entries(haystacks)) {
      for (const [name, secret] of secrets) {
        // The metrics token is expected nowhere either; a secret shorter than 16 characters would be a test bug.
        expect(secret.length).toBeGreaterThanOrEqual(16);
        if (text.includes(secret)) leaks.push(`${name} in ${where}`);
      }
    }
    expect(leaks).toEqual([]);
  }, 60_000);
});
