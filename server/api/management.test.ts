// The webhook management API over HTTP: endpoints and their one-time secrets, versions and the
// disabling of older pending deliveries, destination rules, test webhooks, the activity list
// (pages, search, detail), manual retries, the callback secret, roles, keys and isolation.
//
// Receivers are on 127.0.0.1 and answer 503, so the running delivery engine leaves order
// deliveries pending (retrying) for seconds; `failed` deliveries are made by writing their
// attempts through the store's queue, as the engine would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManagementClient } from '../../client/api.ts';
import type { components } from '../../generated/types/management.ts';
import { createApiKey, createMember } from '../domain/admin.ts';
import type { EnvironmentName, Permission } from '../domain/model.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { answer, fakeResolver, startReceiver, type Receiver } from '../delivery/testing.ts';

type Schemas = components['schemas'];
type Endpoint = Schemas['WebhookEndpoint'];
type EndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
type Delivery = Schemas['Delivery'];
type Management = TestTenant['management'];

const PROBLEM = 'https://errors.payments.example/';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const DAY = 24 * 60 * 60 * 1000;
const FIXTURE_OWNER = 'management-test-fixture';

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  // Every attempt fails at once, so deliveries stay pending (retrying) for seconds.
  receiver = await startReceiver({ handler: answer(503, '{"error":"maintenance"}', { 'content-type': 'application/json' }) });
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
let counter = 0;
const unique = (prefix: string): string => `${prefix}-${++counter}-${Date.now().toString(36)}`;
const hookUrl = (path = '/webhooks'): string => `${receiver.url}${path}`;

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

function ok<T>(r: Result<T>, status = 200): T {
  expect(r.response.status, JSON.stringify(r.error)).toBe(status);
  expect(r.data).toBeDefined();
  return r.data as T;
}

function expectProblem(r: Result<unknown>, status: number, slug: string): Record<string, unknown> {
  expect(r.response.status, JSON.stringify(r.error ?? r.data)).toBe(status);
  expect(r.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = r.error as Record<string, unknown>;
  expect(body).toMatchObject({ type: `${PROBLEM}${slug}`, status, title: expect.any(String), detail: expect.any(String) });
  return body;
}

async function createEndpoint(m: Management, url = hookUrl()): Promise<EndpointWithSecret> {
  return ok(await m.POST('/v2/webhooks/endpoints', { body: { url } }), 201);
}

async function getEndpoint(m: Management, endpointId: string): Promise<Endpoint> {
  return ok(await m.GET('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } } }));
}

async function patch(m: Management, endpointId: string, body: { url: string } | { active: false }) {
  return m.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } }, body });
}

async function createOrder(t: Pick<TestTenant, 'orders'>, merchantReference = unique('cart')): Promise<string> {
  const r = await t.orders.POST('/v2/orders', { body: { merchantReference, amountMinor: 4999, assetId: 'USDC', networkId: 'ethereum', amountBaseUnits: '49990000' } });
  expect(r.response.status, JSON.stringify(r.error)).toBe(201);
  return r.data!.orderId;
}

/** Every delivery of the environment, newest first. */
async function allDeliveries(m: Management, q?: string): Promise<Delivery[]> {
  const out: Delivery[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = ok(await m.GET('/v2/webhooks/deliveries', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}), ...(q ? { q } : {}) } } }));
    out.push(...page.data);
    if (page.nextCursor === null) return out;
    cursor = page.nextCursor;
  }
  throw new Error('the activity did not end');
}

async function deliveryOfOrder(m: Management, orderId: string): Promise<Delivery> {
  const [d, ...rest] = await allDeliveries(m, orderId);
  expect(rest).toEqual([]);
  expect(d).toBeDefined();
  return d!;
}

async function getDelivery(m: Management, deliveryId: string) {
  return ok(await m.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId } } }));
}

async function environment(tenantId: string, name: EnvironmentName = 'test') {
  const env = await server.services.store.transaction((tx) => tx.tenants.findEnvironment(tenantId, name));
  if (!env) throw new Error(`no ${name} environment`);
  return env;
}

async function endpointRecord(tenantId: string, endpointId: string) {
  const envId = (await environment(tenantId)).id;
  const record = await server.services.store.transaction((tx) => tx.endpoints.get(envId, endpointId));
  if (!record) throw new Error(`no endpoint ${endpointId}`);
  return record;
}

/**
 * Makes a delivery `failed` the way the engine would: attempts up to the tenth of its cycle,
 * each written through the queue's lease. Its next attempt is kept a day away so the running
 * engine leaves it alone meanwhile; an attempt the engine made already is kept and counted.
 */
async function failDelivery(m: Management, deliveryId: string): Promise<void> {
  const queue = server.services.store.queue;
  for (let tries = 0; tries < 400; tries++) {
    const claimed = await queue.claim({ owner: FIXTURE_OWNER, now: Date.now() + 2 * DAY, leaseMs: 60_000, limit: 1000, perEndpointLimit: 1000 });
    const mine = claimed.find((c) => c.delivery.id === deliveryId);
    const others = claimed.filter((c) => c !== mine).map((c) => c.delivery.id);
    if (others.length > 0) await queue.release(FIXTURE_OWNER, others);
    if (!mine) {
      // Leased by the engine for a moment, or not pending at all (then this is a test bug).
      const { state } = await getDelivery(m, deliveryId);
      if (state !== 'pending') throw new Error(`delivery ${deliveryId} is ${state}, not pending`);
      await sleep(20);
      continue;
    }
    const number = mine.delivery.attemptCount + 1;
    const last = number >= 10;
    const startedAt = Date.now();
    const stored = await queue.complete(FIXTURE_OWNER, deliveryId, {
      attempt: {
        deliveryId,
        cycle: mine.delivery.cycle,
        number,
        startedAt,
        durationMs: 12,
        signatureTimestamp: Math.floor(startedAt / 1000),
        outcome: 'response',
        statusCode: 503,
        errorClass: null,
        responseBody: '{"error":"maintenance"}',
        success: false,
      },
      state: last ? 'failed' : 'pending',
      nextAttemptAt: last ? null : Date.now() + DAY,
      deliveredAt: null,
    });
    expect(stored).toBe(true);
    if (last) return;
  }
  throw new Error(`could not fail delivery ${deliveryId}`);
}

/** Clients of a new key of the tenant with exactly these permissions. */
async function keyWith(t: TestTenant, permissions: Permission[], environment: EnvironmentName = 'test'): Promise<Management> {
  const k = await createApiKey(server.services, { tenantId: t.tenantId, environment, permissions });
  return server.clientsFor({ apiKey: k.apiKey, apiHash: k.apiHash }).management;
}

async function memberWith(t: TestTenant, role: 'administrator' | 'developer' | 'viewer', active = true): Promise<Management> {
  const m = await createMember(server.services, { tenantId: t.tenantId, email: `${unique(role)}@merchant.example`, role, active });
  return server.clientsFor({ apiKey: t.apiKey, apiHash: t.apiHash, memberToken: m.memberToken }).management;
}

// ---- endpoints and their secret -------------------------------------------------------------

describe('POST /v2/webhooks/endpoints', () => {
  it('creates an active endpoint at version 1 and shows its secret once (no-store, Location), sealed at rest', async () => {
    const t = await server.newTenant();
    // Record every response body the tenant is sent from now on.
    const bodies: string[] = [];
    const m = createManagementClient({
      baseUrl: server.url,
      memberToken: t.memberToken,
      fetch: async (input: string | URL | Request, init?: RequestInit) => {
        const res = await fetch(input, init);
        bodies.push(`${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${await res.clone().text()}`);
        return res;
      },
    });

    const r = await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl() } });
    const created = ok(r, 201);
    expect(created).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      environment: 'test',
      url: hookUrl(),
      active: true,
      version: 1,
      createdAt: expect.stringMatching(ISO),
      updatedAt: created.createdAt,
      disabledAt: null,
      lastTest: null,
      secret: expect.stringMatching(SECRET),
    });
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64url')).toHaveLength(32);
    expect(r.response.headers.get('cache-control')).toBe('no-store');
    expect(r.response.headers.get('location')).toBe(`/v2/webhooks/endpoints/${created.id}`);
    const secret = created.secret;

    // Stored only sealed: the column holds no trace of it, and opens to it.
    const record = await endpointRecord(t.tenantId, created.id);
    expect(record.secretEnc).not.toContain(secret);
    expect(record.secretEnc).not.toContain(secret.slice('whsec_'.length));
    expect(server.services.secrets.open(record.secretEnc)).toBe(secret);

    // Never again: not by reads, a URL edit, a test webhook, the activity, a retry or a rotation.
    bodies.length = 0;
    expect(await getEndpoint(m, created.id)).toEqual({ ...created, secret: undefined });
    ok(await m.GET('/v2/webhooks/endpoints'));
    ok(await patch(m, created.id, { url: hookUrl('/webhooks-v2') }));
    const orderId = await createOrder(t);
    const test = ok(await m.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: created.id } } }), 201);
    ok(await m.GET('/v2/webhooks/deliveries'));
    await getDelivery(m, test.id);
    const orderDelivery = await deliveryOfOrder(m, orderId);
    await getDelivery(m, orderDelivery.id);
    await failDelivery(m, orderDelivery.id);
    ok(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: orderDelivery.id } } }));
    const rotated = ok(await m.POST('/v2/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId: created.id } } }));
    expect(rotated.secret).toMatch(SECRET);
    expect(rotated.secret).not.toBe(secret);
    expect(bodies.length).toBeGreaterThanOrEqual(10);
    for (const body of bodies) expect(body).not.toContain(secret);

    // The URL edit kept the secret; the rotation replaced it.
    expect(server.services.secrets.open((await endpointRecord(t.tenantId, created.id)).secretEnc)).toBe(rotated.secret);
  });

  it('keeps one active endpoint per environment: a second is 409 endpoint-exists naming the active one, also under a race', async () => {
    const t = await server.newTenant();
    const first = await createEndpoint(t.management);
    const second = await t.management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/other') } });
    const problem = expectProblem(second, 409, 'endpoint-exists');
    expect(problem.detail).toContain(first.id);
    expect(ok(await t.management.GET('/v2/webhooks/endpoints')).data.map((e) => e.id)).toEqual([first.id]);

    // Concurrent creations on an empty environment: exactly one wins.
    const u = await server.newTenant();
    const results = await Promise.all([1, 2, 3, 4].map((i) => u.management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl(`/race-${i}`) } })));
    expect(results.map((r) => r.response.status).sort()).toEqual([201, 409, 409, 409]);
    expect(ok(await u.management.GET('/v2/webhooks/endpoints')).data).toHaveLength(1);
  });

  it('refuses a private address even with the development setting on, and a body that is not {url}', async () => {
    const t = await server.newTenant();
    const bad = await t.management.POST('/v2/webhooks/endpoints', { body: { url: 'http://10.0.4.17/webhooks' } });
    expect(expectProblem(bad, 400, 'destination-not-allowed').rule).toBe('private-address');
    const extra = await t.management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl(), active: true } as unknown as { url: string } });
    expectProblem(extra, 400, 'validation-failed');
    const missing = await t.management.POST('/v2/webhooks/endpoints', { body: {} as { url: string } });
    expect((expectProblem(missing, 400, 'validation-failed').errors as Array<{ pointer: string }>).map((e) => e.pointer)).toContain('/body/url');
    expect(ok(await t.management.GET('/v2/webhooks/endpoints')).data).toEqual([]);
  });
});

describe('destination rules with the development setting off', () => {
  let strict: TestServer;
  beforeAll(async () => {
    // A resolver that knows no name: nothing here ever asks real DNS or connects anywhere.
    strict = await startTestServer({ env: { WEBHOOK_ALLOW_INSECURE_URLS: undefined }, resolve: fakeResolver() });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it('refuses each broken rule with 400 destination-not-allowed naming it, and writes nothing', async () => {
    const t = await strict.newTenant();
    const cases: Array<[string, string]> = [
      ['http://hooks.merchant.example/payments/webhooks', 'https-required'],
      ['https://hooks.merchant.example:8443/payments/webhooks', 'port-443-required'],
      ['https://merchant:s3cret@hooks.merchant.example/payments/webhooks', 'no-credentials'],
      ['https://hooks.merchant.example/payments/webhooks#orders', 'no-fragment'],
      ['https://127.0.0.1/payments/webhooks', 'loopback-address'],
      ['https://localhost/payments/webhooks', 'loopback-address'],
      ['https://10.0.4.17/payments/webhooks', 'private-address'],
      ['https://172.16.8.1/payments/webhooks', 'private-address'],
      ['https://192.168.1.20/payments/webhooks', 'private-address'],
      ['https://169.254.169.254/latest/meta-data', 'link-local-address'],
      ['https://100.64.12.7/payments/webhooks', 'cgnat-address'],
      ['https://224.0.0.251/payments/webhooks', 'multicast-address'],
      ['https://[::1]/payments/webhooks', 'ipv6-not-supported'],
    ];
    for (const [url, rule] of cases) {
      const r = await t.management.POST('/v2/webhooks/endpoints', { body: { url } });
      const problem = expectProblem(r, 400, 'destination-not-allowed');
      expect(problem.rule, url).toBe(rule);
    }
    expect(ok(await t.management.GET('/v2/webhooks/endpoints')).data).toEqual([]);

    // A public https URL on the implicit or explicit port 443 is saved (no delivery is made here).
    const created = ok(await t.management.POST('/v2/webhooks/endpoints', { body: { url: 'https://hooks.merchant.example:443/payments/webhooks' } }), 201);
    expect(created.url).toBe('https://hooks.merchant.example/payments/webhooks');

    // A URL edit follows the same rules; a refused one changes nothing.
    for (const [url, rule] of cases.slice(0, 5)) {
      const r = await t.management.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: created.id } }, body: { url } });
      expect(expectProblem(r, 400, 'destination-not-allowed').rule, url).toBe(rule);
    }
    const read = ok(await t.management.GET('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: created.id } } }));
    expect(read).toMatchObject({ version: 1, url: 'https://hooks.merchant.example/payments/webhooks' });
  });
});

// ---- versions --------------------------------------------------------------------------------

describe('PATCH /v2/webhooks/endpoints/{endpointId} and rotate-secret', () => {
  it('raise the version on a URL edit, a rotation and disabling, and turn older pending deliveries disabled', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const created = await createEndpoint(m);

    const v1Orders = [await createOrder(t), await createOrder(t), await createOrder(t)];
    for (const id of v1Orders) expect(await deliveryOfOrder(m, id)).toMatchObject({ state: 'pending', endpointVersion: 1 });

    const edited = ok(await patch(m, created.id, { url: hookUrl('/webhooks-v2') }));
    expect(edited).toEqual({ ...created, secret: undefined, url: hookUrl('/webhooks-v2'), version: 2, updatedAt: expect.stringMatching(ISO) });
    expect(Date.parse(edited.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    for (const id of v1Orders) {
      expect(await deliveryOfOrder(m, id)).toMatchObject({ state: 'disabled', progress: 'disabled', nextAttemptAt: null, endpointVersion: 1, url: hookUrl() });
    }

    const v2Orders = [await createOrder(t), await createOrder(t)];
    for (const id of v2Orders) expect(await deliveryOfOrder(m, id)).toMatchObject({ state: 'pending', endpointVersion: 2, url: hookUrl('/webhooks-v2') });
    const rotated = ok(await m.POST('/v2/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId: created.id } } }));
    expect(rotated).toMatchObject({ id: created.id, version: 3, active: true, url: hookUrl('/webhooks-v2'), secret: expect.stringMatching(SECRET) });
    for (const id of v2Orders) expect(await deliveryOfOrder(m, id)).toMatchObject({ state: 'disabled', endpointVersion: 2 });

    const v3Order = await createOrder(t);
    expect(await deliveryOfOrder(m, v3Order)).toMatchObject({ state: 'pending', endpointVersion: 3 });
    const disabled = ok(await patch(m, created.id, { active: false }));
    expect(disabled).toMatchObject({ id: created.id, active: false, version: 4, disabledAt: disabled.updatedAt, url: hookUrl('/webhooks-v2') });
    expect(await deliveryOfOrder(m, v3Order)).toMatchObject({ state: 'disabled', endpointVersion: 3 });

    // Without an active endpoint an order gets no delivery, and the activity stays visible.
    const unsent = await createOrder(t);
    expect(await allDeliveries(m, unsent)).toEqual([]);
    const activity = await allDeliveries(m);
    expect(activity.map((d) => d.orderId)).toEqual([v3Order, ...[...v2Orders].reverse(), ...[...v1Orders].reverse()]);
    expect(activity.every((d) => d.state === 'disabled')).toBe(true);
    expect(await getEndpoint(m, created.id)).toEqual(disabled);
  });

  it('a disabled endpoint takes no change, rotation or test (409 endpoint-inactive), cannot be re-enabled, and no longer counts', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const created = await createEndpoint(m);
    const disabled = ok(await patch(m, created.id, { active: false }));

    expectProblem(await patch(m, created.id, { url: hookUrl('/again') }), 409, 'endpoint-inactive');
    expectProblem(await patch(m, created.id, { active: false }), 409, 'endpoint-inactive');
    expectProblem(await m.POST('/v2/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId: created.id } } }), 409, 'endpoint-inactive');
    expectProblem(await m.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: created.id } } }), 409, 'endpoint-inactive');
    const reenable = await m.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: created.id } }, body: { active: true } as unknown as { active: false } });
    expectProblem(reenable, 400, 'validation-failed');
    expect(await getEndpoint(m, created.id)).toEqual(disabled);

    // A new endpoint can be created; both are listed, newest first.
    const replacement = await createEndpoint(m, hookUrl('/replacement'));
    expect(replacement.id).not.toBe(created.id);
    expect(ok(await m.GET('/v2/webhooks/endpoints')).data.map((e) => [e.id, e.active])).toEqual([
      [replacement.id, true],
      [created.id, false],
    ]);
  });

  it('accepts exactly one of {url} and {active: false}', async () => {
    const t = await server.newTenant();
    const created = await createEndpoint(t.management);
    for (const body of [{}, { url: hookUrl('/a'), active: false }, { url: hookUrl('/a'), secret: 'whsec_x' }]) {
      const r = await t.management.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: created.id } }, body: body as { url: string } });
      expectProblem(r, 400, 'validation-failed');
    }
    expect(await getEndpoint(t.management, created.id)).toMatchObject({ version: 1, url: hookUrl() });
    expectProblem(await patch(t.management, 'whe_01JD9Z0Y8X7W6V5T4S3R2Q1P0N', { active: false }), 404, 'not-found');
  });
});

// ---- test webhooks -----------------------------------------------------------------------------

describe('POST /v2/webhooks/endpoints/{endpointId}/test', () => {
  it('queues a webhook.test delivery, shown as the endpoint lastTest, without changing the endpoint or the events feed', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const created = await createEndpoint(m);
    const r = await m.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: created.id } } });
    const d = ok(r, 201);
    expect(r.response.headers.get('location')).toBe(`/v2/webhooks/deliveries/${d.id}`);
    expect(r.response.headers.get('cache-control')).toBeNull();
    expect(d).toEqual({
      id: expect.stringMatching(/^dlv_/),
      kind: 'webhook_test',
      eventId: expect.stringMatching(HEX64),
      eventType: 'webhook.test',
      endpointId: created.id,
      endpointVersion: 1,
      url: hookUrl(),
      state: 'pending',
      progress: 'queued',
      attemptCount: 0,
      cycle: 1,
      maxAttempts: 10,
      nextAttemptAt: d.createdAt,
      createdAt: expect.stringMatching(ISO),
      updatedAt: d.createdAt,
      deliveredAt: null,
      orderId: null,
      merchantReference: null,
      transactionId: null,
      lastResponse: null,
    });

    const detail = await getDelivery(m, d.id);
    expect(detail.payload).toEqual({ id: d.eventId, type: 'webhook.test', apiVersion: 'v2', createdAt: d.createdAt, data: { environment: 'test' } });

    const endpoint = await getEndpoint(m, created.id);
    expect(endpoint).toMatchObject({ version: 1, updatedAt: created.updatedAt });
    expect(endpoint.lastTest).toEqual({
      deliveryId: d.id,
      eventId: d.eventId,
      progress: expect.stringMatching(/^(queued|sending|retrying)$/),
      at: expect.stringMatching(ISO),
    });

    // No order, and not in the order events feed.
    const feed = ok(await t.orders.GET('/v2/events', { params: { query: { limit: 100 } } }));
    expect(feed.data.map((e) => e.id)).not.toContain(d.eventId);

    // A second test replaces lastTest.
    const again = ok(await m.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: created.id } } }), 201);
    expect((await getEndpoint(m, created.id)).lastTest?.deliveryId).toBe(again.id);
    expect(again.eventId).not.toBe(d.eventId);
  });
});

// ---- activity ----------------------------------------------------------------------------------

describe('GET /v2/webhooks/deliveries', () => {
  let t: TestTenant;
  const refs: string[] = [];
  const orders: string[] = [];

  beforeAll(async () => {
    t = await server.newTenant();
    await createEndpoint(t.management);
    for (let i = 1; i <= 12; i++) {
      refs.push(`cart-78${String(i).padStart(2, '0')}`);
      orders.push(await createOrder(t, refs[i - 1]));
    }
  });

  it('pages five at a time, newest first, with a cursor to "Load 5 more" and no duplicates', async () => {
    const m = t.management;
    const seen: Delivery[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const body = ok(await m.GET('/v2/webhooks/deliveries', { params: { query: cursor ? { cursor } : {} } }));
      sizes.push(body.data.length);
      seen.push(...body.data);
      if (body.nextCursor === null) break;
      expect(body.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      cursor = body.nextCursor;
    }
    expect(sizes).toEqual([5, 5, 2]);
    expect(new Set(seen.map((d) => d.id)).size).toBe(12);
    expect(seen.map((d) => d.merchantReference)).toEqual([...refs].reverse());
    expect(seen.map((d) => d.orderId)).toEqual([...orders].reverse());
    for (const d of seen) {
      expect(d).toMatchObject({ kind: 'order_event', eventType: 'order.created', state: 'pending', transactionId: null, maxAttempts: 10, cycle: 1 });
      expect(['queued', 'sending', 'retrying']).toContain(d.progress);
    }
    for (let i = 1; i < seen.length; i++) expect(Date.parse(seen[i - 1]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(seen[i]!.createdAt));

    // Other limits page the same sequence.
    const big = ok(await m.GET('/v2/webhooks/deliveries', { params: { query: { limit: 100 } } }));
    expect(big.data.map((d) => d.id)).toEqual(seen.map((d) => d.id));
    expect(big.nextCursor).toBeNull();
  });

  it('searches by exact order id, merchant reference or event id; a near miss finds nothing', async () => {
    const m = t.management;
    const byOrder = await allDeliveries(m, orders[0]);
    expect(byOrder.map((d) => d.orderId)).toEqual([orders[0]]);
    // cart-7801 is a prefix of no other reference, but cart-780 is a prefix of nine of them.
    expect((await allDeliveries(m, 'cart-7801')).map((d) => d.merchantReference)).toEqual(['cart-7801']);
    expect(await allDeliveries(m, 'cart-780')).toEqual([]);
    expect(await allDeliveries(m, 'CART-7801')).toEqual([]);
    const byEvent = await allDeliveries(m, byOrder[0]!.eventId);
    expect(byEvent.map((d) => d.id)).toEqual([byOrder[0]!.id]);
    expect(await allDeliveries(m, byOrder[0]!.eventId.slice(0, 63))).toEqual([]);
    const nearMiss = `${orders[0]!.slice(0, -1)}${orders[0]!.endsWith('0') ? '1' : '0'}`;
    expect(await allDeliveries(m, nearMiss)).toEqual([]);
    expect(await allDeliveries(m, orders[0]!.toUpperCase())).toEqual([]);

    // A search pages like the list.
    const again = await createOrder(t, 'cart-7801');
    const first = ok(await m.GET('/v2/webhooks/deliveries', { params: { query: { q: 'cart-7801', limit: 1 } } }));
    expect(first.data.map((d) => d.orderId)).toEqual([again]);
    const second = ok(await m.GET('/v2/webhooks/deliveries', { params: { query: { q: 'cart-7801', limit: 1, cursor: first.nextCursor! } } }));
    expect(second.data.map((d) => d.orderId)).toEqual([orders[0]]);
    expect(second.nextCursor).toBeNull();
  });

  it('refuses a cursor it did not issue and out-of-range limits (400 validation-failed)', async () => {
    const m = t.management;
    for (const cursor of ['bm90LWEtY3Vyc29y', 'AAAA', 'MDAx']) {
      const r = await m.GET('/v2/webhooks/deliveries', { params: { query: { cursor } } });
      const problem = expectProblem(r, 400, 'validation-failed');
      expect(problem.errors).toEqual([{ pointer: '/query/cursor', detail: 'is not a valid cursor' }]);
    }
    for (const limit of [0, 101]) expectProblem(await m.GET('/v2/webhooks/deliveries', { params: { query: { limit } } }), 400, 'validation-failed');
    expectProblem(await m.GET('/v2/webhooks/deliveries', { params: { query: { q: '' } } }), 400, 'validation-failed');
  });
});

describe('GET /v2/webhooks/deliveries/{deliveryId}', () => {
  it('answers every attempt newest first, the last response and the exact payload of the event', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const endpoint = await createEndpoint(m);
    const orderId = await createOrder(t, 'cart-7834');
    const d = await deliveryOfOrder(m, orderId);
    await failDelivery(m, d.id);

    const detail = await getDelivery(m, d.id);
    expect(detail).toMatchObject({
      id: d.id,
      kind: 'order_event',
      eventId: d.eventId,
      eventType: 'order.created',
      endpointId: endpoint.id,
      endpointVersion: 1,
      url: hookUrl(),
      state: 'failed',
      progress: 'failed',
      attemptCount: 10,
      cycle: 1,
      maxAttempts: 10,
      nextAttemptAt: null,
      deliveredAt: null,
      orderId,
      merchantReference: 'cart-7834',
      transactionId: null,
    });
    expect(detail.attempts.map((a) => [a.cycle, a.number])).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1].map((n) => [1, n]));
    expect(detail.lastResponse).toEqual(detail.attempts[0]);
    expect(detail.attempts[0]).toEqual({
      number: 10,
      cycle: 1,
      startedAt: expect.stringMatching(ISO),
      durationMs: 12,
      signatureTimestamp: expect.any(Number),
      outcome: 'response',
      statusCode: 503,
      errorClass: null,
      responseBody: '{"error":"maintenance"}',
      success: false,
    });

    // The payload is the event of the feed, byte for byte what was signed.
    const feed = ok(await t.orders.GET('/v2/events', { params: { query: { limit: 100 } } }));
    const event = feed.data.find((e) => e.id === d.eventId);
    expect(event).toBeDefined();
    expect(detail.payload).toEqual(event);
    expect(detail.payload).toMatchObject({ id: d.eventId, type: 'order.created', apiVersion: 'v2', data: { orderId, merchantReference: 'cart-7834' } });

    // The list shows the same delivery without attempts and payload.
    const [listed] = await allDeliveries(m, orderId);
    const { attempts: _attempts, payload: _payload, ...base } = detail;
    expect(listed).toEqual(base);

    expectProblem(await m.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId: 'dlv_01JD9Z1A2B3C4D5E6F7G8H9J0K' } } }), 404, 'not-found');
  });
});

// ---- retries -------------------------------------------------------------------------------------

describe('POST /v2/webhooks/deliveries/{deliveryId}/retry', () => {
  it('refuses a delivery that is not failed (409 delivery-not-retryable)', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const endpoint = await createEndpoint(m);
    const pending = await deliveryOfOrder(m, await createOrder(t));
    const r = await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: pending.id } } });
    expect(expectProblem(r, 409, 'delivery-not-retryable').detail).toContain('pending');

    ok(await patch(m, endpoint.id, { url: hookUrl('/v2') }));
    const disabled = await getDelivery(m, pending.id);
    expect(disabled.state).toBe('disabled');
    const again = await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: pending.id } } });
    expect(expectProblem(again, 409, 'delivery-not-retryable').detail).toContain('disabled');
    expect((await getDelivery(m, pending.id)).state).toBe('disabled');
  });

  it('restarts a failed delivery in a new cycle to the current endpoint, with the original event id and payload', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const endpoint = await createEndpoint(m);
    const orderId = await createOrder(t, 'cart-7834');
    const d = await deliveryOfOrder(m, orderId);
    await failDelivery(m, d.id);
    const before = await getDelivery(m, d.id);

    // A URL edit leaves failed deliveries failed; the retry goes to the new URL and version.
    const edited = ok(await patch(m, endpoint.id, { url: hookUrl('/webhooks-v2') }));
    expect((await getDelivery(m, d.id)).state).toBe('failed');

    const retried = ok(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } }));
    expect(retried).toEqual({
      ...before,
      attempts: undefined,
      payload: undefined,
      endpointId: endpoint.id,
      endpointVersion: edited.version,
      url: hookUrl('/webhooks-v2'),
      state: 'pending',
      progress: 'queued',
      attemptCount: 0,
      cycle: 2,
      nextAttemptAt: retried.updatedAt,
      updatedAt: expect.stringMatching(ISO),
      lastResponse: before.lastResponse,
    });
    expect(retried.eventId).toBe(d.eventId);

    const after = await getDelivery(m, d.id);
    expect(after.payload).toEqual(before.payload);
    expect(after.cycle).toBe(2);
    // The first cycle's attempts stay in the history.
    expect(after.attempts.filter((a) => a.cycle === 1)).toEqual(before.attempts);

    // Only once: it is no longer failed.
    expectProblem(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } }), 409, 'delivery-not-retryable');
  });

  it('needs an active endpoint for order and test deliveries, and then uses the newest one', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const old = await createEndpoint(m);
    const order = await deliveryOfOrder(m, await createOrder(t));
    const test = ok(await m.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: old.id } } }), 201);
    await failDelivery(m, order.id);
    await failDelivery(m, test.id);
    ok(await patch(m, old.id, { active: false }));

    for (const d of [order, test]) {
      const r = await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } });
      expect(expectProblem(r, 409, 'delivery-not-retryable').detail).toContain('no active webhook endpoint');
      expect((await getDelivery(m, d.id)).state).toBe('failed');
    }

    const current = await createEndpoint(m, hookUrl('/new-home'));
    for (const d of [order, test]) {
      const retried = ok(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } }));
      expect(retried).toMatchObject({ id: d.id, kind: d.kind, eventId: d.eventId, endpointId: current.id, endpointVersion: 1, url: hookUrl('/new-home'), state: 'pending', cycle: 2, attemptCount: 0 });
    }
  });

  it('retries a failed payout callback to its notifyUrl without any endpoint', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const notifyUrl = hookUrl('/payouts/completed');
    const payout = await t.transactions.POST('/transactions/payout', { body: { thirdPartyId: 'merchant-payout-2026-000183', userId: 'user_5521', amount: 150.25, notifyUrl } });
    expect(payout.response.status).toBe(201);
    const transactionId = payout.data!.transactionId;
    const settled = await t.sandbox.POST('/sandbox/payouts/{transactionId}/settle', { params: { path: { transactionId } }, body: { status: 'success' } });
    expect(settled.response.status).toBe(200);

    const [callback, ...rest] = await allDeliveries(m);
    expect(rest).toEqual([]);
    expect(callback).toMatchObject({ kind: 'payout_callback', eventType: 'payout.completed', endpointId: null, endpointVersion: null, url: notifyUrl, transactionId, orderId: null, merchantReference: null });
    expect((await getDelivery(m, callback!.id)).payload).toEqual({ transactionId, thirdPartyId: 'merchant-payout-2026-000183', amount: 150.25, status: 'success' });

    // Rotating the callback secret does not disable a pending callback.
    ok(await m.POST('/v2/webhooks/callback-secret/rotate'));
    expect((await getDelivery(m, callback!.id)).state).toBe('pending');

    await failDelivery(m, callback!.id);
    const retried = ok(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: callback!.id } } }));
    expect(retried).toMatchObject({ kind: 'payout_callback', eventId: callback!.eventId, endpointId: null, endpointVersion: null, url: notifyUrl, state: 'pending', progress: 'queued', cycle: 2, attemptCount: 0 });
  });
});

// ---- callback secret -----------------------------------------------------------------------------

describe('POST /v2/webhooks/callback-secret/rotate', () => {
  it('answers a new secret each time (no-store) and seals it into the environment', async () => {
    const t = await server.newTenant();
    const secrets = new Set<string>([t.callbackSecret]);
    for (let i = 0; i < 3; i++) {
      const r = await t.management.POST('/v2/webhooks/callback-secret/rotate');
      const body = ok(r);
      expect(body).toEqual({ secret: expect.stringMatching(SECRET), rotatedAt: expect.stringMatching(ISO) });
      expect(r.response.headers.get('cache-control')).toBe('no-store');
      expect(secrets.has(body.secret)).toBe(false);
      secrets.add(body.secret);
      const env = await environment(t.tenantId);
      expect(env.callbackSecretEnc).not.toContain(body.secret);
      expect(server.services.secrets.open(env.callbackSecretEnc)).toBe(body.secret);
    }
    // The live environment's secret is its own and unchanged.
    const live = await environment(t.tenantId, 'live');
    expect(server.services.secrets.open(live.callbackSecretEnc)).toBe(t.liveCallbackSecret);
  });
});

// ---- credentials, roles and isolation ------------------------------------------------------------

describe('authentication and roles', () => {
  let t: TestTenant;
  let endpoint: EndpointWithSecret;
  let deliveryId: string;

  beforeAll(async () => {
    t = await server.newTenant();
    endpoint = await createEndpoint(t.management);
    deliveryId = (await deliveryOfOrder(t.management, await createOrder(t))).id;
  });

  const reads = (m: Management) => [
    m.GET('/v2/webhooks/endpoints'),
    m.GET('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: endpoint.id } } }),
    m.GET('/v2/webhooks/deliveries'),
    m.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId } } }),
  ];
  const writes = (m: Management) => [
    m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/viewer') } }),
    m.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: endpoint.id } }, body: { active: false } }),
    m.POST('/v2/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId: endpoint.id } } }),
    m.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: endpoint.id } } }),
    m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId } } }),
    m.POST('/v2/webhooks/callback-secret/rotate'),
  ];

  it('lets a viewer read but not change anything (403), and refuses an inactive member everything', async () => {
    const viewer = await memberWith(t, 'viewer');
    for (const r of await Promise.all(reads(viewer))) expect(r.response.status).toBe(200);
    for (const r of await Promise.all(writes(viewer))) expectProblem(r, 403, 'permission-denied');

    const inactive = await memberWith(t, 'developer', false);
    for (const r of await Promise.all([...reads(inactive), ...writes(inactive)])) {
      expect(expectProblem(r, 403, 'permission-denied').detail).toContain('inactive');
    }
    expect(await getEndpoint(t.management, endpoint.id)).toMatchObject({ active: true, version: 1 });
  });

  it('lets a developer member and a key with only webhooks_manage manage; a key without it gets 403', async () => {
    const developer = await memberWith(t, 'developer');
    ok(await developer.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: endpoint.id } } }), 201);

    const key = await keyWith(t, ['webhooks_manage']);
    for (const r of await Promise.all(reads(key))) expect(r.response.status).toBe(200);
    const rotated = ok(await key.POST('/v2/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId: endpoint.id } } }));
    expect(rotated.version).toBe(2);

    const other = await keyWith(t, ['orders_read', 'orders_write', 'payouts', 'transactions_read', 'refunds', 'staking']);
    for (const r of await Promise.all([...reads(other), ...writes(other)])) {
      expect(expectProblem(r, 403, 'permission-denied').detail).toContain('webhooks_manage');
    }
    expect(await getEndpoint(t.management, endpoint.id)).toMatchObject({ active: true, version: 2 });
  });

  it('answers 401 without valid credentials', async () => {
    const nobody = createManagementClient({ baseUrl: server.url, memberToken: 'mt_not-a-real-token' });
    expectProblem(await nobody.GET('/v2/webhooks/endpoints'), 401, 'unauthenticated');
    const wrongHash = createManagementClient({ baseUrl: server.url, apiKey: t.apiKey, apiHash: 'sk_test_wrong' });
    expectProblem(await wrongHash.GET('/v2/webhooks/endpoints'), 401, 'unauthenticated');
    const none = await fetch(`${server.url}/v2/webhooks/endpoints`);
    expect(none.status).toBe(401);
  });
});

describe('isolation', () => {
  it("keeps a tenant's endpoints and deliveries invisible and untouchable to another tenant (404, empty lists)", async () => {
    const a = await server.newTenant('Northwind Games Ltd');
    const endpoint = await createEndpoint(a.management);
    const orderId = await createOrder(a);
    const d = await deliveryOfOrder(a.management, orderId);
    await failDelivery(a.management, d.id);

    const b = await server.newTenant('Contoso Pay');
    await createEndpoint(b.management, hookUrl('/contoso'));
    for (const m of [b.management, await keyWith(b, ['webhooks_manage'])]) {
      expectProblem(await m.GET('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: endpoint.id } } }), 404, 'not-found');
      expectProblem(await patch(m, endpoint.id, { active: false }), 404, 'not-found');
      expectProblem(await m.POST('/v2/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId: endpoint.id } } }), 404, 'not-found');
      expectProblem(await m.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: endpoint.id } } }), 404, 'not-found');
      expectProblem(await m.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId: d.id } } }), 404, 'not-found');
      expectProblem(await m.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } }), 404, 'not-found');
      expect(ok(await m.GET('/v2/webhooks/endpoints')).data.map((e) => e.id)).not.toContain(endpoint.id);
      expect(await allDeliveries(m, orderId)).toEqual([]);
      expect(await allDeliveries(m, d.eventId)).toEqual([]);
      expect((await allDeliveries(m)).map((x) => x.id)).not.toContain(d.id);
    }
    // Untouched.
    expect(await getEndpoint(a.management, endpoint.id)).toMatchObject({ active: true, version: 1 });
    expect((await getDelivery(a.management, d.id)).state).toBe('failed');
  });

  it('keeps test and live apart: members pick with environment, keys are bound to their own', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const testEndpoint = await createEndpoint(m);
    const testDelivery = await deliveryOfOrder(m, await createOrder(t));
    const live = { query: { environment: 'live' as const } };

    expect(ok(await m.GET('/v2/webhooks/endpoints', { params: live })).data).toEqual([]);
    expect(ok(await m.GET('/v2/webhooks/deliveries', { params: live })).data).toEqual([]);
    expectProblem(await m.GET('/v2/webhooks/endpoints/{endpointId}', { params: { ...live, path: { endpointId: testEndpoint.id } } }), 404, 'not-found');
    expectProblem(await m.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { ...live, path: { deliveryId: testDelivery.id } } }), 404, 'not-found');

    // Each environment has its own endpoint, even for the same URL, with its own secret.
    const liveCreated = await m.POST('/v2/webhooks/endpoints', { params: live, body: { url: hookUrl() } });
    const liveEndpoint = ok(liveCreated, 201);
    // Its Location names the environment, so a member's GET of it finds it.
    const location = liveCreated.response.headers.get('location')!;
    expect(location).toBe(`/v2/webhooks/endpoints/${liveEndpoint.id}?environment=live`);
    const atLocation = await fetch(`${server.url}${location}`, { headers: { authorization: `Bearer ${t.memberToken}` } });
    expect(atLocation.status).toBe(200);
    expect(await atLocation.json()).toEqual({ ...liveEndpoint, secret: undefined });
    expect(liveEndpoint).toMatchObject({ environment: 'live', version: 1, url: testEndpoint.url });
    expect(liveEndpoint.secret).not.toBe(testEndpoint.secret);
    expect(ok(await m.GET('/v2/webhooks/endpoints', { params: { query: { environment: 'test' } } })).data.map((e) => e.id)).toEqual([testEndpoint.id]);
    expect(ok(await m.GET('/v2/webhooks/endpoints')).data.map((e) => e.id)).toEqual([testEndpoint.id]);

    // A test key answers only for test; asking for live is tenant-mismatch, and the other way round.
    const testKey = await keyWith(t, ['webhooks_manage']);
    expectProblem(await testKey.GET('/v2/webhooks/endpoints', { params: live }), 403, 'tenant-mismatch');
    expect(ok(await testKey.GET('/v2/webhooks/endpoints', { params: { query: { environment: 'test' } } })).data.map((e) => e.id)).toEqual([testEndpoint.id]);
    const liveKey = await keyWith(t, ['webhooks_manage'], 'live');
    expect(ok(await liveKey.GET('/v2/webhooks/endpoints')).data.map((e) => e.id)).toEqual([liveEndpoint.id]);
    expectProblem(await liveKey.GET('/v2/webhooks/endpoints', { params: { query: { environment: 'test' } } }), 403, 'tenant-mismatch');
    expectProblem(await liveKey.GET('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: testEndpoint.id } } }), 404, 'not-found');

    expectProblem(await m.GET('/v2/webhooks/endpoints', { params: { query: { environment: 'staging' as 'live' } } }), 400, 'validation-failed');
  });
});
