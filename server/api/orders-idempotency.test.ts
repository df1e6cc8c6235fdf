// Idempotency-Key on POST /v2/orders over HTTP: a retry replays the first answer and creates
// nothing, another body under the same key is refused, concurrent duplicates create one order,
// and keys are scoped to the tenant environment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/types/orders.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { orderEventsOf } from './testing/orders.ts';

type OrderEvent = components['schemas']['OrderEvent'];

const PROBLEM = 'https://errors.payments.example/';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** POST /v2/orders with this exact body text and Idempotency-Key. */
async function post(t: TestTenant, text: string, key?: string): Promise<Answer> {
  const res = await fetch(`${server.url}/v2/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash, ...(key !== undefined ? { 'Idempotency-Key': key } : {}) },
    body: text,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

async function createdEvents(t: TestTenant): Promise<OrderEvent[]> {
  const r = await t.orders.GET('/v2/events', { params: { query: { type: 'order.created', limit: 100 } } });
  expect(r.response.status).toBe(200);
  return orderEventsOf(r.data!.data);
}

const BODY = { merchantReference: 'cart-idem', amountMinor: 4999, assetId: 'USDC', networkId: 'ethereum', amountBaseUnits: '49990000' };

describe('POST /v2/orders with Idempotency-Key', () => {
  it('replays the first answer for the same key and body, in any key order or spacing, and creates nothing', async () => {
    const t = await server.newTenant();
    const first = await post(t, JSON.stringify(BODY), 'key-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const reordered = `{ "amountBaseUnits": "49990000",\n  "networkId": "ethereum", "assetId": "USDC", "amountMinor": 4999, "merchantReference": "cart-idem" }`;
    for (const text of [JSON.stringify(BODY), reordered]) {
      const again = await post(t, text, 'key-1');
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(first.headers.get('location'));
      expect(again.body).toEqual(first.body);
    }
    expect((await createdEvents(t)).map((e) => e.data.orderId)).toEqual([first.body.orderId]);

    // The replay is the first answer even after the order changed.
    const orderId = String(first.body.orderId);
    const dep = await t.sandbox.POST('/sandbox/orders/{orderId}/deposits', { params: { path: { orderId } }, body: { amountBaseUnits: '49990000', verified: true, txHash: `0x${'c4'.repeat(32)}` } });
    expect(dep.data?.order.paymentStatus).toBe('paid');
    const later = await post(t, JSON.stringify(BODY), 'key-1');
    expect(later.status).toBe(201);
    expect(later.body).toEqual(first.body);
    expect(later.body.paymentStatus).toBe('unpaid');

    // Without a key, or with another key, every request creates an order.
    const plain = [await post(t, JSON.stringify(BODY)), await post(t, JSON.stringify(BODY)), await post(t, JSON.stringify(BODY), 'key-2')];
    expect(new Set([orderId, ...plain.map((a) => a.body.orderId)]).size).toBe(4);
  });

  it('refuses the same key with another body: 422 idempotency-key-reused, nothing created', async () => {
    const t = await server.newTenant();
    const first = await post(t, JSON.stringify(BODY), 'key-reused');
    expect(first.status).toBe(201);
    for (const other of [{ ...BODY, amountMinor: 5000 }, { merchantReference: 'cart-idem', amountMinor: 4999 }]) {
      const r = await post(t, JSON.stringify(other), 'key-reused');
      expect(r.status).toBe(422);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({ type: `${PROBLEM}idempotency-key-reused`, status: 422 });
    }
    expect(await createdEvents(t)).toHaveLength(1);
  });

  it('creates one order for concurrent duplicates; each answers it', async () => {
    const t = await server.newTenant();
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(t, JSON.stringify(BODY), 'key-race')));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((a) => a.body.orderId)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    for (const a of answers) expect(a.body).toEqual(answers[0]!.body);
    expect(await createdEvents(t)).toHaveLength(1);

    // Concurrent requests with the same key and different bodies: one wins, the others are refused.
    const mixed = await Promise.all(Array.from({ length: 6 }, (_, i) => post(t, JSON.stringify({ ...BODY, amountMinor: 100 + i }), 'key-race-2')));
    expect(mixed.filter((a) => a.status === 201)).toHaveLength(1);
    expect(mixed.filter((a) => a.status === 422)).toHaveLength(5);
    expect(await createdEvents(t)).toHaveLength(2);
  });

  it('scopes keys to the tenant environment, and validates the key', async () => {
    const a = await server.newTenant();
    const b = await server.newTenant();
    const fromA = await post(a, JSON.stringify(BODY), 'shared-key');
    const fromB = await post(b, JSON.stringify({ ...BODY, amountMinor: 1 }), 'shared-key');
    expect([fromA.status, fromB.status]).toEqual([201, 201]);
    expect(fromB.body.orderId).not.toBe(fromA.body.orderId);
    expect(fromB.headers.get('idempotent-replayed')).toBeNull();

    for (const key of ['has space', 'x'.repeat(256), 'tab\there']) {
      const r = await post(a, JSON.stringify(BODY), key);
      expect(r.status, key).toBe(400);
      expect(r.body).toMatchObject({ type: `${PROBLEM}validation-failed` });
    }
    expect(await createdEvents(a)).toHaveLength(1);
  });
});
