// Shared by the webhook management API tests (server/api/management-*.test.ts): one real server
// per test file (setupServer) and a receiver that answers 503, so the running delivery engine
// leaves order deliveries pending (retrying) for seconds; `failed` deliveries are made by
// writing their attempts through the store's queue, as the engine would.
import { afterAll, beforeAll, expect } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../../generated/problem-types.ts';
import type { components } from '../../../generated/types/management.ts';
import { createApiKey, createMember } from '../../domain/admin.ts';
import type { EnvironmentName, Permission } from '../../domain/model.ts';
import { startTestServer, type TestServer, type TestTenant } from '../../testing/harness.ts';
import { answer, startReceiver, type Receiver } from '../../delivery/testing.ts';

export type Schemas = components['schemas'];
export type Endpoint = Schemas['WebhookEndpoint'];
export type EndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type Delivery = Schemas['Delivery'];
export type Management = TestTenant['management'];

export const PROBLEM = PROBLEM_TYPE_BASE;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const SECRET = /^whsec_[A-Za-z0-9]{44}$/;
export const HEX64 = /^[0-9a-f]{64}$/;
export const DAY = 24 * 60 * 60 * 1000;
export const FIXTURE_OWNER = 'management-test-fixture';

export let server: TestServer;
export let receiver: Receiver;

/** Starts the receiver and the server before the file's tests and closes them after. */
export function setupServer(): void {
  beforeAll(async () => {
    // Every attempt fails at once, so deliveries stay pending (retrying) for seconds.
    receiver = await startReceiver({ handler: answer(503, '{"error":"maintenance"}', { 'content-type': 'application/json' }) });
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
export let counter = 0;
export const unique = (prefix: string): string => `${prefix}-${++counter}-${Date.now().toString(36)}`;
export const hookUrl = (path = '/webhooks'): string => `${receiver.url}${path}`;

export interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export function ok<T>(r: Result<T>, status = 200): T {
  expect(r.response.status, JSON.stringify(r.error)).toBe(status);
  expect(r.data).toBeDefined();
  return r.data as T;
}

export function expectProblem(r: Result<unknown>, status: number, slug: string): Record<string, unknown> {
  expect(r.response.status, JSON.stringify(r.error ?? r.data)).toBe(status);
  expect(r.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = r.error as Record<string, unknown>;
  expect(body).toMatchObject({ type: `${PROBLEM}${slug}`, status, title: expect.any(String), detail: expect.any(String) });
  return body;
}

export async function createEndpoint(m: Management, url = hookUrl()): Promise<EndpointWithSecret> {
  return ok(await m.POST('/v2/webhooks/endpoints', { body: { url } }), 201);
}

export async function getEndpoint(m: Management, endpointId: string): Promise<Endpoint> {
  return ok(await m.GET('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } } }));
}

export async function patch(m: Management, endpointId: string, body: Schemas['UpdateWebhookEndpointRequest']) {
  return m.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } }, body });
}

export async function createOrder(t: Pick<TestTenant, 'orders'>, merchantReference = unique('cart')): Promise<string> {
  const r = await t.orders.POST('/v2/orders', { body: { merchantReference, amountMinor: 4999, assetId: 'USDC', networkId: 'ethereum', amountBaseUnits: '49990000' } });
  expect(r.response.status, JSON.stringify(r.error)).toBe(201);
  return r.data!.orderId;
}

/** Every delivery of the environment, newest first. */
export async function allDeliveries(m: Management, q?: string): Promise<Delivery[]> {
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

export async function deliveryOfOrder(m: Management, orderId: string): Promise<Delivery> {
  const [d, ...rest] = await allDeliveries(m, orderId);
  expect(rest).toEqual([]);
  expect(d).toBeDefined();
  return d!;
}

export async function getDelivery(m: Management, deliveryId: string) {
  return ok(await m.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId } } }));
}

export async function environment(tenantId: string, name: EnvironmentName = 'test') {
  const env = await server.services.store.transaction((tx) => tx.tenants.findEnvironment(tenantId, name));
  if (!env) throw new Error(`no ${name} environment`);
  return env;
}

export async function endpointRecord(tenantId: string, endpointId: string) {
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
export async function failDelivery(m: Management, deliveryId: string): Promise<void> {
  await failCycle(server.services, FIXTURE_OWNER, deliveryId, async () => {
    // Leased by the engine for a moment, or not pending at all (then this is a test bug).
    const { state } = await getDelivery(m, deliveryId);
    if (state !== 'pending') throw new Error(`delivery ${deliveryId} is ${state}, not pending`);
  });
}

/** failDelivery on any test server, as `owner`; `notClaimed` runs while another holds the lease. */
export async function failCycle(services: TestServer['services'], owner: string, deliveryId: string, notClaimed: () => Promise<void> = async () => undefined): Promise<void> {
  const queue = services.store.queue;
  for (let tries = 0; tries < 400; tries++) {
    const claimed = await queue.claim({ owner, now: Date.now() + 2 * DAY, leaseMs: 60_000, limit: 1000, perEndpointLimit: 1000 });
    const mine = claimed.find((c) => c.delivery.id === deliveryId);
    const others = claimed.filter((c) => c !== mine).map((c) => c.delivery.id);
    if (others.length > 0) await queue.release(owner, others);
    if (!mine) {
      await notClaimed();
      await sleep(20);
      continue;
    }
    const number = mine.delivery.attemptCount + 1;
    const last = number >= 10;
    const startedAt = Date.now();
    const attempt = {
      deliveryId,
      cycle: mine.delivery.cycle,
      number,
      startedAt,
      durationMs: 12,
      signatureTimestamp: Math.floor(startedAt / 1000),
      outcome: 'response' as const,
      statusCode: 503,
      errorClass: null,
      responseBody: '{"error":"maintenance"}',
      success: false,
    };
    const result = { attempt, state: last ? ('failed' as const) : ('pending' as const), nextAttemptAt: last ? null : Date.now() + DAY, deliveredAt: null };
    // Recorded the way the worker records its batches, under the lease the claim gave.
    const { applied } = await queue.completeAndClaim(owner, [{ deliveryId, leaseExpiresAt: mine.delivery.leaseExpiresAt!, result }], null);
    expect(applied).toEqual([true]);
    if (last) return;
  }
  throw new Error(`could not fail delivery ${deliveryId}`);
}

/** Clients of a new key of the tenant with exactly these permissions. */
export async function keyWith(t: TestTenant, permissions: Permission[], environment: EnvironmentName = 'test'): Promise<Management> {
  const k = await createApiKey(server.services, { tenantId: t.tenantId, environment, permissions });
  return server.clientsFor({ apiKey: k.apiKey, apiHash: k.apiHash }).management;
}

export async function memberWith(t: TestTenant, role: 'administrator' | 'developer' | 'viewer', active = true): Promise<Management> {
  const m = await createMember(server.services, { tenantId: t.tenantId, email: `${unique(role)}@merchant.example`, role, active });
  return server.clientsFor({ apiKey: t.apiKey, apiHash: t.apiHash, memberToken: m.memberToken }).management;
}

// ---- endpoints and their secret -------------------------------------------------------------
