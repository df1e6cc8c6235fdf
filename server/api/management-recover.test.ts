// Recovery by time range (POST /v2/webhooks/endpoints/{endpointId}/recover) through the running
// delivery engine: every failed delivery of the window goes again exactly once per request, in
// a new cycle with its event id and body; delivered ones only with include=all; deliveries
// outside the window are left alone.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/types/management.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { until } from '../../testing/until.ts';
import { failCycle, getDelivery, sleep } from './testing/management.ts';

type DeliveryDetail = components['schemas']['DeliveryDetail'];

let server: TestServer;
let receiver: Server;
let receiverUrl: string;
/** Requests per event id, and their bodies. */
const received = new Map<string, string[]>();
/** While down, only orders whose reference starts with ok- are answered 200. */
let down = true;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const id = String(req.headers['service-event-id']);
      received.set(id, [...(received.get(id) ?? []), body]);
      const fail = down && !body.includes('"merchantReference":"ok-');
      res.writeHead(fail ? 503 : 200, { 'content-type': 'application/json' }).end(fail ? '{"error":"maintenance"}' : '{"received":true}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

/** Creates an order and returns its delivery. */
async function order(t: TestTenant, merchantReference: string): Promise<DeliveryDetail> {
  const created = await t.orders.POST('/v2/orders', { body: { merchantReference, amountMinor: 1000 } });
  expect(created.response.status).toBe(201);
  const page = await t.management.GET('/v2/webhooks/deliveries', { params: { query: { q: created.data!.orderId } } });
  const d = page.data?.data[0];
  if (!d) throw new Error(`no delivery for ${merchantReference}`);
  return getDelivery(t.management, d.id);
}

describe('recovery by time range', () => {
  it('re-delivers every failed delivery of the window exactly once per request, and the delivered ones with include=all', async () => {
    const t = await server.newTenant();
    const created = await t.management.POST('/v2/webhooks/endpoints', { body: { url: receiverUrl } });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const endpointId = created.data!.id;

    const since = new Date(Date.now() - 1).toISOString();
    const inWindow = [];
    for (let i = 0; i < 4; i++) inWindow.push(await order(t, `fail-${i}`));
    const delivered = await order(t, 'ok-0');
    await sleep(2);
    const untilIso = new Date().toISOString();
    await sleep(2);
    const outside = await order(t, 'fail-late');
    for (const d of [...inWindow, outside]) {
      await failCycle(server.services, 'recover-test', d.id);
      expect((await getDelivery(t.management, d.id)).state).toBe('failed');
    }
    await until(async () => (await getDelivery(t.management, delivered.id)).state === 'delivered', 'the ok- delivery');

    down = false;
    received.clear();
    const recover = (include?: 'failed' | 'all') =>
      t.management.POST('/v2/webhooks/endpoints/{endpointId}/recover', { params: { path: { endpointId } }, body: { since, until: untilIso, ...(include ? { include } : {}) } });
    const first = await recover();
    expect(first.response.status, JSON.stringify(first.error)).toBe(202);
    expect(first.data).toMatchObject({ recovered: 4, nextSince: null });
    expect(first.data!.lastDueAt).not.toBeNull();
    for (const d of inWindow) await until(async () => (await getDelivery(t.management, d.id)).state === 'delivered', `recovered ${d.id}`);
    for (const d of inWindow) {
      const after = await getDelivery(t.management, d.id);
      expect(after).toMatchObject({ cycle: 2, eventId: d.eventId, state: 'delivered' });
      const bodies = received.get(d.eventId) ?? [];
      expect(bodies).toHaveLength(1);
      expect(JSON.parse(bodies[0]!)).toEqual(d.payload);
    }
    expect(received.has(outside.eventId)).toBe(false);
    expect(received.has(delivered.eventId)).toBe(false);
    expect((await getDelivery(t.management, outside.id)).state).toBe('failed');

    // Nothing failed is left in the window; include=all sends the five delivered ones once more.
    expect((await recover()).data).toMatchObject({ recovered: 0, lastDueAt: null, nextSince: null });
    received.clear();
    const all = await recover('all');
    expect(all.data).toMatchObject({ recovered: 5, nextSince: null });
    for (const d of [...inWindow, delivered]) await until(async () => (await getDelivery(t.management, d.id)).state === 'delivered' && received.has(d.eventId), `sent again ${d.id}`);
    expect([...inWindow, delivered].map((d) => received.get(d.eventId)?.length)).toEqual([1, 1, 1, 1, 1]);
    expect(received.has(outside.eventId)).toBe(false);
  }, 60_000);

  it('recovers one endpoint only, and only the types it receives now', async () => {
    down = true; // every attempt refused until the cycles are failed by hand
    const t = await server.newTenant();
    const mine = (await t.management.POST('/v2/webhooks/endpoints', { body: { url: `${receiverUrl}/mine` } })).data!.id;
    const sibling = (await t.management.POST('/v2/webhooks/endpoints', { body: { url: `${receiverUrl}/sibling` } })).data!.id;
    const since = new Date(Date.now() - 1).toISOString();
    const created = await t.orders.POST('/v2/orders', { body: { merchantReference: 'fan-recover', amountMinor: 1000 } });
    const listed = (await t.management.GET('/v2/webhooks/deliveries', { params: { query: { q: created.data!.orderId } } })).data!.data;
    expect(listed.map((d) => d.endpointId).sort()).toEqual([mine, sibling].sort());
    for (const d of listed) await failCycle(server.services, 'recover-fan-out-test', d.id);
    const recover = () => t.management.POST('/v2/webhooks/endpoints/{endpointId}/recover', { params: { path: { endpointId: mine } }, body: { since } });
    // No longer receiving order.created: nothing of that type goes again.
    expect((await t.management.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: mine } }, body: { eventTypes: ['order.paid'] } })).response.status).toBe(200);
    expect((await recover()).data).toMatchObject({ recovered: 0 });
    // Receiving it again: its own failed delivery goes, the sibling's stays failed.
    expect((await t.management.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: mine } }, body: { eventTypes: ['order.created'] } })).response.status).toBe(200);
    expect((await recover()).data).toMatchObject({ recovered: 1 });
    const byEndpoint = new Map((await t.management.GET('/v2/webhooks/deliveries', { params: { query: { q: created.data!.orderId } } })).data!.data.map((d) => [d.endpointId, d]));
    expect(byEndpoint.get(mine)).toMatchObject({ cycle: 2, endpointVersion: 3 });
    expect(byEndpoint.get(sibling)).toMatchObject({ state: 'failed', cycle: 1 });
    down = false;
  });

  it('refuses an empty window (400) and a disabled endpoint (409)', async () => {
    const t = await server.newTenant();
    const endpointId = (await t.management.POST('/v2/webhooks/endpoints', { body: { url: receiverUrl } })).data!.id;
    const now = new Date().toISOString();
    const empty = await t.management.POST('/v2/webhooks/endpoints/{endpointId}/recover', { params: { path: { endpointId } }, body: { since: now, until: now } });
    expect(empty.response.status).toBe(400);
    expect(empty.error).toMatchObject({ type: 'https://errors.payments.example/validation-failed', errors: [{ pointer: '/body/until' }] });
    await t.management.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } }, body: { active: false } });
    const disabled = await t.management.POST('/v2/webhooks/endpoints/{endpointId}/recover', { params: { path: { endpointId } }, body: { since: '2026-01-01T00:00:00.000Z' } });
    expect(disabled.response.status).toBe(409);
    expect(disabled.error).toMatchObject({ type: 'https://errors.payments.example/endpoint-inactive' });
  });
});
