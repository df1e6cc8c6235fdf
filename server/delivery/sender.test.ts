import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { generateSecret } from '../../signing/signature.ts';
import { newEventId } from '../domain/ids.ts';
import type { EventRecord } from '../domain/model.ts';
import { ATTEMPT_TIMEOUT_MS } from './schedule.ts';
import { RESPONSE_BODY_LIMIT, classifySendError, createSender, type Sender } from './sender.ts';
import { USER_AGENT, buildDeliveryRequest } from './sign.ts';
import {
  answer,
  closedPort,
  fakeResolver,
  loopbackPolicy,
  neverAnswer,
  startReceiver,
  testCertificate,
  type Receiver,
  type TestCertificate,
} from './testing.ts';
import { DestinationRefusedError } from '../destination/rules.ts';

// Every connection in this file goes to 127.0.0.1. Other names only reach fake resolvers.

const T = Date.UTC(2026, 10, 22, 8, 15, 30);

function event(): EventRecord {
  const id = newEventId();
  return {
    id,
    environmentId: 'env_01KAMV0TEST',
    type: 'order.paid',
    // Non-ASCII on purpose: the bytes signed must be the bytes sent.
    payload: JSON.stringify({ id, type: 'order.paid', apiVersion: 'v2', createdAt: new Date(T).toISOString(), data: { note: 'Zürich – 50 €' } }),
    orderId: null,
    merchantReference: null,
    transactionId: null,
    createdAt: T,
  };
}

const senders: Sender[] = [];
const receivers: Receiver[] = [];
function sender(opts: Partial<Parameters<typeof createSender>[0]> = {}): Sender {
  // 10 s unless a test is about the deadline (those pass 300 ms): a loaded CI run once took
  // more than 300 ms to answer a loopback request that succeeds.
  const s = createSender({ policy: loopbackPolicy(), timeoutMs: 10_000, ...opts });
  senders.push(s);
  return s;
}
async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}
afterEach(async () => {
  await Promise.all(senders.splice(0).map((s) => s.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const plain = { 'Content-Type': 'application/json' };

describe('sender', () => {
  it('sends exactly the signed bytes and headers, and a 200 is a success', async () => {
    const rx = await receiver();
    const secret = generateSecret();
    const e = event();
    const req = buildDeliveryRequest(e, secret, T);
    const out = await sender().send({ url: `${rx.url}/hooks/payments?shop=42`, ...req });

    expect(out).toMatchObject({ outcome: 'response', statusCode: 200, errorClass: null, success: true, responseBody: '{"received":true}' });
    expect(out.durationMs).toBeGreaterThanOrEqual(0);
    expect(rx.requests).toHaveLength(1);
    const seen = rx.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/hooks/payments?shop=42');
    expect(seen.body.equals(Buffer.from(e.payload, 'utf8'))).toBe(true);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(e.payload)));
    expect(seen.headers['service-event-id']).toBe(e.id);
    expect(seen.headers['user-agent']).toBe(USER_AGENT);
    expect(seen.headers['service-signature']).toBe(req.headers['Service-Signature']);
    expect(seen.headers['service-signature']).toMatch(/^t=[0-9]{1,12},v1=[0-9a-f]{64}$/);
    // Nothing else of ours: only the four webhook headers and the transport's own.
    const names = Object.keys(seen.headers).sort();
    expect(names).toEqual(['connection', 'content-length', 'content-type', 'host', 'service-event-id', 'service-signature', 'user-agent']);

    // The receiver can verify it with the client helper and with a plain HMAC.
    const verified = verifyWebhook<{ id: string }>({ rawBody: seen.body, headers: seen.headers, secrets: secret, now: () => T + 1000 });
    expect(verified.eventId).toBe(e.id);
    expect(verified.timestamp).toBe(Math.floor(T / 1000));
    const hmac = createHmac('sha256', secret).update(`${Math.floor(T / 1000)}.`).update(seen.body).digest('hex');
    expect(seen.headers['service-signature']).toBe(`t=${Math.floor(T / 1000)},v1=${hmac}`);
  });

  it('counts a 500 as a failure and keeps the body excerpt', async () => {
    const rx = await receiver({ handler: answer(500, 'upstream database unavailable') });
    const out = await sender().send({ url: rx.url, body: '{}', headers: plain });
    expect(out).toMatchObject({ outcome: 'response', statusCode: 500, errorClass: null, success: false, responseBody: 'upstream database unavailable' });
  });

  it('counts every non-2xx as a failure and every 2xx as a success', async () => {
    const rx = await receiver();
    const s = sender();
    for (const [status, success] of [[201, true], [204, true], [299, true], [400, false], [404, false], [429, false], [503, false]] as const) {
      rx.handle(answer(status));
      const out = await s.send({ url: rx.url, body: '{}', headers: plain });
      expect({ status: out.statusCode, success: out.success }).toEqual({ status, success });
    }
  });

  it('never follows a redirect: a 302 is an unsuccessful response and its target receives nothing', async () => {
    const target = await receiver();
    const rx = await receiver({ handler: answer(302, 'moved', { location: `${target.url}/elsewhere` }) });
    const out = await sender().send({ url: rx.url, body: '{}', headers: plain });
    expect(out).toMatchObject({ outcome: 'response', statusCode: 302, success: false, responseBody: 'moved' });
    expect(target.requests).toHaveLength(0); // a followed redirect would have been sent before send() answered
  });

  it('cuts a slow answer at the deadline', async () => {
    const rx = await receiver({ handler: neverAnswer });
    const started = Date.now();
    const out = await sender({ timeoutMs: 300 }).send({ url: rx.url, body: '{}', headers: plain });
    const took = Date.now() - started;
    expect(out).toMatchObject({ outcome: 'error', statusCode: null, errorClass: 'timeout', success: false, responseBody: null });
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(2_000);
    expect(out.durationMs).toBeGreaterThanOrEqual(280);
  });

  it('bounds the body too: headers then a stalled body is a timeout', async () => {
    const rx = await receiver({
      handler: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial'); // ...and never ends
      },
    });
    const started = Date.now();
    const out = await sender({ timeoutMs: 300 }).send({ url: rx.url, body: '{}', headers: plain });
    expect(out).toMatchObject({ outcome: 'error', errorClass: 'timeout', success: false });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('uses a 10-second deadline by default', async () => {
    const s = createSender({ policy: loopbackPolicy() });
    senders.push(s);
    expect(s.timeoutMs).toBe(ATTEMPT_TIMEOUT_MS);
    expect(ATTEMPT_TIMEOUT_MS).toBe(10_000);
  });

  it('reports a connection reset in the middle of the response', async () => {
    const rx = await receiver({
      handler: (req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('half an ans');
        setTimeout(() => req.socket.destroy(), 20);
      },
    });
    const out = await sender().send({ url: rx.url, body: '{}', headers: plain });
    expect(out).toMatchObject({ outcome: 'error', statusCode: null, errorClass: 'connection_reset', success: false });
  });

  it('reports a connection reset before any response', async () => {
    const rx = await receiver({ handler: (req) => void req.socket.destroy() });
    const out = await sender().send({ url: rx.url, body: '{}', headers: plain });
    expect(out).toMatchObject({ outcome: 'error', errorClass: 'connection_reset', success: false });
  });

  it('reports connection refused on a closed port', async () => {
    const port = await closedPort();
    const out = await sender().send({ url: `http://127.0.0.1:${port}/hooks`, body: '{}', headers: plain });
    expect(out).toMatchObject({ outcome: 'error', statusCode: null, errorClass: 'connection_refused', success: false, responseBody: null });
  });

  it('reports a DNS failure (and it is retried like any failure)', async () => {
    const resolve = fakeResolver({});
    const out = await sender({ policy: loopbackPolicy(resolve) }).send({ url: 'http://hooks.northwind.example:8080/payments', body: '{}', headers: plain });
    expect(out).toMatchObject({ outcome: 'error', errorClass: 'dns_failure', success: false });
    expect(resolve.calls).toEqual(['hooks.northwind.example']);
  });

  it('refuses a name that resolves to a private address before any connection', async () => {
    const resolve = fakeResolver({ 'internal.northwind.example': [{ address: '10.0.0.1', family: 4 }] });
    const out = await sender({ policy: loopbackPolicy(resolve) }).send({ url: 'http://internal.northwind.example/payments', body: '{}', headers: plain });
    expect(out).toMatchObject({ outcome: 'error', statusCode: null, errorClass: 'destination_not_allowed', success: false });
    expect(resolve.calls).toEqual(['internal.northwind.example']);
  });

  it('refuses IP-literal destinations the policy forbids without resolving or connecting', async () => {
    const resolve = fakeResolver({});
    const s = sender({ policy: loopbackPolicy(resolve) });
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://[::ffff:a00:1]/', 'http://0x0a000001/']) {
      const out = await s.send({ url, body: '{}', headers: plain });
      expect({ url, errorClass: out.errorClass }).toEqual({ url, errorClass: 'destination_not_allowed' });
    }
    expect(resolve.calls).toEqual([]);
  });

  it('keeps only the first 2 KiB of a large response body', async () => {
    const big = 'x'.repeat(RESPONSE_BODY_LIMIT - 1) + 'é' + 'y'.repeat(1024 * 1024); // 'é' straddles the limit
    const rx = await receiver({ handler: answer(500, big) });
    const out = await sender().send({ url: rx.url, body: '{}', headers: plain });
    expect(out).toMatchObject({ outcome: 'response', statusCode: 500, success: false });
    // The cut multi-byte character is dropped, not replaced.
    expect(out.responseBody).toBe('x'.repeat(RESPONSE_BODY_LIMIT - 1));
    expect(Buffer.byteLength(out.responseBody ?? '')).toBeLessThanOrEqual(RESPONSE_BODY_LIMIT);
  });

  it('keeps exactly 2 KiB of a large ASCII body', async () => {
    const rx = await receiver({ handler: answer(200, 'a'.repeat(10_000)) });
    const out = await sender().send({ url: rx.url, body: '{}', headers: plain });
    expect(out.success).toBe(true);
    expect(out.responseBody).toBe('a'.repeat(RESPONSE_BODY_LIMIT));
  });

  it('reuses the connection (keep-alive) across attempts', async () => {
    const rx = await receiver();
    const s = sender();
    for (let i = 0; i < 6; i++) expect((await s.send({ url: rx.url, body: '{}', headers: plain })).success).toBe(true);
    const ports = new Set(rx.requests.map((r) => r.remotePort));
    expect(rx.requests).toHaveLength(6);
    // undici may open a second pooled connection while the first is being released; both are reused.
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  describe('TLS', () => {
    let cert: TestCertificate;
    beforeAll(async () => {
      cert = await testCertificate();
    });

    it('refuses an untrusted certificate as tls_error', async () => {
      const rx = await receiver({ tls: cert });
      const out = await sender().send({ url: rx.url, body: '{}', headers: plain });
      expect(out).toMatchObject({ outcome: 'error', statusCode: null, errorClass: 'tls_error', success: false });
      expect(rx.requests).toHaveLength(0);
    });

    it('delivers over https when the certificate is trusted', async () => {
      const rx = await receiver({ tls: cert });
      const out = await sender({ tls: { ca: cert.cert } }).send({ url: `${rx.url}/hooks`, body: '{"ok":1}', headers: plain });
      expect(out).toMatchObject({ outcome: 'response', statusCode: 200, success: true });
      expect(rx.requests[0]?.body.toString()).toBe('{"ok":1}');
    });
  });
});

describe('classifySendError', () => {
  it.each([
    [Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'connection_refused'],
    [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'connection_reset'],
    [Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }), 'connection_reset'],
    [Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' }), 'dns_failure'],
    [Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), 'dns_failure'],
    [new DestinationRefusedError('unresolvable-host'), 'dns_failure'],
    [new DestinationRefusedError('private-address'), 'destination_not_allowed'],
    [Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), 'timeout'],
    [Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), 'timeout'],
    [Object.assign(new Error('Body Timeout Error'), { code: 'UND_ERR_BODY_TIMEOUT' }), 'timeout'],
    [Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' }), 'tls_error'],
    [Object.assign(new Error('altnames'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }), 'tls_error'],
    [Object.assign(new Error('wrong version number'), { code: 'ERR_SSL_WRONG_VERSION_NUMBER' }), 'tls_error'],
    [new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]), 'connection_refused'],
    [new Error('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ENOTFOUND' }) }), 'dns_failure'],
    [Object.assign(new Error('no route'), { code: 'EHOSTUNREACH' }), 'network_error'],
    ['a string', 'network_error'],
  ] as const)('%s is %s', (err, expected) => {
    expect(classifySendError(err)).toBe(expected);
  });
});

