// The operator's view through real HTTP: /healthz, /readyz, /metrics and its guard, and the
// figures moving with real requests and a real delivery. Readiness and the start-up retry
// with an injected store and sleep.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { ManualClock } from '../domain/clock.ts';
import { openServicesWithRetry } from '../lifecycle/open-with-retry.ts';
import type { openServices } from '../services.ts';
import type { Store } from '../domain/store.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { createMetrics } from './metrics.ts';
import { createReadiness } from './readiness.ts';
import { createOperatorApp } from './routes.ts';
import { until } from '../../testing/until.ts';

const TOKEN = 'metrics-token-for-tests-0123456789';
const PROBLEM = 'application/problem+json';

let server: TestServer;
let tenant: TestTenant;
let receiver: Server;
let receiverUrl: string;
let received = 0;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  server = await startTestServer({ env: { METRICS_TOKEN: TOKEN } });
  tenant = await server.newTenant();
});
afterAll(async () => {
  await server?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

const scrape = (token: string | null = TOKEN) => fetch(`${server.url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelPart = line.slice(name.length).split(' ')[0] ?? '';
    if (want.every((w) => labelPart.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('/healthz and /readyz', () => {
  it('/healthz is liveness, /readyz is ready once the store is open', async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const r = await fetch(`${server.url}/readyz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ready' });
  });
});

describe('/metrics', () => {
  it('refuses a missing or wrong token with 401 problem+json', async () => {
    for (const token of [null, 'wrong-token-wrong-token-wrong']) {
      const r = await scrape(token);
      expect(r.status).toBe(401);
      expect(r.headers.get('content-type')).toBe(PROBLEM);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      expect(((await r.json()) as { type: string }).type).toMatch(/\/unauthenticated$/);
    }
  });

  it('counts requests by operation and status, store commits, attempts and the queue; no tenant data in it', async () => {
    const payout = await tenant.transactions.POST('/transactions/payout', { body: { thirdPartyId: 'metrics-1', userId: 'user-1', amount: 1 } });
    expect(payout.response.status).toBe(201);
    await tenant.transactions.POST('/transactions/payout', { body: { thirdPartyId: 'metrics-1', userId: 'user-1', amount: 1 } });
    const endpoint = await tenant.management.POST('/v2/webhooks/endpoints', { body: { url: receiverUrl } });
    expect(endpoint.response.status).toBe(201);
    await tenant.management.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: endpoint.data!.id } } });
    await until(() => received > 0, 'the test webhook at the receiver', 10_000);

    const text = await until(async () => {
      const r = await scrape();
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const body = await r.text();
      return (sample(body, 'webhook_delivery_attempts_total', { outcome: 'delivered' }) ?? 0) > 0 && body;
    }, 'the delivered attempt in the metrics', 5_000);
    expect(sample(text, 'http_requests_total', { operation: 'createPayout', method: 'POST', status: '201' })).toBe(1);
    expect(sample(text, 'http_requests_total', { operation: 'createPayout', method: 'POST', status: '409' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { operation: 'createPayout', status: '201' })).toBe(1);
    expect(sample(text, 'webhook_delivery_attempts_total', { outcome: 'delivered', error_class: 'none' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'webhook_attempt_duration_seconds_count', { outcome: 'delivered' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'store_transaction_duration_seconds_count', { outcome: 'commit' })).toBeGreaterThan(0);
    expect(sample(text, 'webhook_queue_deliveries', { state: 'due' })).toBe(0);
    expect(sample(text, 'webhook_queue_deliveries', { state: 'leased' })).toBeDefined();
    expect(sample(text, 'webhook_queue_deliveries', { state: 'waiting' })).toBeDefined();
    expect(sample(text, 'webhook_queue_oldest_due_age_seconds')).toBe(0);
    expect(sample(text, 'webhook_queue_stats_up')).toBe(1);
    expect(sample(text, 'webhook_attempts_in_flight')).toBe(0);
    // The test webhook was claimed and its attempt recorded: deliveries a claim and a batch are their ratios.
    expect(sample(text, 'webhook_queue_claimed_total')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'webhook_queue_claims_total')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'webhook_queue_recorded_total')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'webhook_queue_record_batches_total')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    for (const secret of [tenant.tenantId, tenant.apiKey, tenant.apiHash, tenant.memberToken, tenant.callbackSecret, endpoint.data!.id, endpoint.data!.secret, receiverUrl]) {
      expect(text).not.toContain(secret);
    }
  });

  it('without METRICS_TOKEN or METRICS_PORT, /metrics is not served on the public port', async () => {
    const plain = await startTestServer();
    try {
      const r = await fetch(`${plain.url}/metrics`);
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toBe(PROBLEM);
    } finally {
      await plain.close();
    }
  });
});

describe('the operator listener (METRICS_PORT)', () => {
  it('serves /healthz, /readyz and /metrics, nothing else', async () => {
    const metrics = createMetrics({ clock: new ManualClock(), defaultMetrics: false });
    const readiness = createReadiness({ clock: new ManualClock() });
    const app = createOperatorApp({ readiness, metrics, token: null });
    expect((await app.request('/healthz')).status).toBe(200);
    const notReady = await app.request('/readyz');
    expect(notReady.status).toBe(503);
    expect(((await notReady.json()) as { detail: string }).detail).toMatch(/starting/);
    expect((await app.request('/metrics')).status).toBe(200);
    expect((await app.request('/transactions/payout', { method: 'POST' })).status).toBe(404);
  });
});

/** A store whose every transaction fails the way an unreachable PostgreSQL does. */
function unreachableStore(): Store {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  return { transaction: () => Promise.reject(refused) } as unknown as Store;
}

describe('readiness', () => {
  it('not ready while starting, the store unreachable, migrations pending or draining; the reason in detail', async () => {
    const clock = new ManualClock();
    const readiness = createReadiness({ clock, cacheMs: 1000 });
    expect(await readiness.check()).toMatchObject({ ready: false, reason: 'starting' });
    readiness.notReady('migrations-pending', 'applying');
    expect(await readiness.check()).toMatchObject({ ready: false, reason: 'migrations-pending' });
    readiness.serving(server.services.store);
    expect(await readiness.check()).toEqual({ ready: true });

    const down = createReadiness({ clock });
    down.serving(unreachableStore());
    expect(await down.check()).toMatchObject({ ready: false, reason: 'store-unreachable', detail: expect.stringContaining('ECONNREFUSED') });

    readiness.draining();
    expect(await readiness.check()).toMatchObject({ ready: false, reason: 'draining' });
    readiness.serving(server.services.store); // a late serving() does not undo draining
    expect(readiness.current()).toMatchObject({ ready: false, reason: 'draining' });
  });
});

describe('start-up with the store unreachable', () => {
  it('waits and retries with a growing delay and a log line, /readyz naming the reason, then opens', async () => {
    const lines: Array<{ msg: string; reason?: string; retryInMs?: number }> = [];
    const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
    const readiness = createReadiness({ clock: new ManualClock() });
    const slept: number[] = [];
    const reasons: string[] = [];
    let calls = 0;
    const open = (async () => {
      calls++;
      if (calls <= 4) throw Object.assign(new AggregateError([Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })]), {});
      return { services: { store: server.services.store }, fresh: false };
    }) as unknown as typeof openServices;
    const opened = await openServicesWithRetry(loadConfig({}), log, {
      readiness,
      open,
      sleep: async (ms) => {
        slept.push(ms);
        const s = readiness.current();
        reasons.push(s.ready ? 'ready' : s.reason);
      },
      initialDelayMs: 500,
      maxDelayMs: 3000,
    });
    expect(opened.services.store).toBe(server.services.store);
    expect(slept).toEqual([500, 1000, 2000, 3000]);
    expect(reasons).toEqual(['store-unreachable', 'store-unreachable', 'store-unreachable', 'store-unreachable']);
    const warnings = lines.filter((l) => l.msg.startsWith('store unreachable at start'));
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toMatchObject({ reason: 'ECONNREFUSED', retryInMs: 500, msg: 'store unreachable at start (ECONNREFUSED): retrying in 0.5 s' });
  });

  it('fails at once on an error that waiting will not fix', async () => {
    const readiness = createReadiness({ clock: new ManualClock() });
    const open = (async () => {
      throw Object.assign(new Error('password authentication failed'), { code: '28P01' });
    }) as unknown as typeof openServices;
    await expect(openServicesWithRetry(loadConfig({}), pino({ level: 'silent' }), { readiness, open, sleep: async () => undefined })).rejects.toThrow(/password/);
  });
});
