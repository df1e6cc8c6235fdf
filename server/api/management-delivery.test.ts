// End to end through the running delivery engine: an endpoint created over the management API
// receives a signed webhook.test on a loopback receiver, the signature verifies with the secret
// shown at creation, and the activity and the endpoint's lastTest show it delivered. Then a
// failed order delivery, retried after a rotation, reaches the current URL with the original
// event id and body, signed with the current secret.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import type { components } from '../../generated/types/management.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { failCycle, getDelivery } from './testing/management.ts';
import { until } from '../../testing/until.ts';

type DeliveryDetail = components['schemas']['DeliveryDetail'];

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

let server: TestServer;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** Paths that answer 503; everything else answers 200. */
const failing = new Set<string>();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      const down = failing.has(req.url ?? '');
      res.writeHead(down ? 503 : 200, { 'content-type': 'application/json' }).end(down ? '{"error":"maintenance"}' : '{"received":true}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

function waitForState(t: TestTenant, deliveryId: string, state: DeliveryDetail['state'], timeoutMs = 10_000): Promise<DeliveryDetail> {
  return until(async () => {
    const d = await getDelivery(t.management, deliveryId);
    return d.state === state && d;
  }, `delivery ${deliveryId} ${state}`, timeoutMs);
}

function requestsFor(eventId: string): Received[] {
  return received.filter((r) => r.headers['service-event-id'] === eventId);
}

describe('webhook delivery through the management API', () => {
  it('delivers a signed webhook.test that verifies with the secret shown at creation', async () => {
    const t = await server.newTenant();
    const created = await t.management.POST('/v2/webhooks/endpoints', { body: { url: `${receiverUrl}/webhooks` } });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const { id: endpointId, secret } = created.data!;

    const queued = await t.management.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId } } });
    expect(queued.response.status).toBe(201);
    const test = queued.data!;
    expect(test).toMatchObject({ kind: 'webhook_test', state: 'pending', progress: 'queued' });

    const delivered = await waitForState(t, test.id, 'delivered');
    expect(delivered).toMatchObject({ progress: 'delivered', attemptCount: 1, cycle: 1, nextAttemptAt: null, deliveredAt: expect.any(String) });
    expect(delivered.attempts).toHaveLength(1);
    expect(delivered.lastResponse).toEqual(delivered.attempts[0]);
    expect(delivered.attempts[0]).toMatchObject({ number: 1, cycle: 1, outcome: 'response', statusCode: 200, errorClass: null, responseBody: '{"received":true}', success: true });

    const [request, ...more] = requestsFor(test.eventId);
    expect(more).toEqual([]);
    expect(request).toBeDefined();
    expect(request!.path).toBe('/webhooks');
    expect(request!.headers['content-type']).toMatch(/^application\/json/);
    expect(request!.headers['service-signature']).toMatch(/^t=\d{1,12},v1=[0-9a-f]{64}$/);
    const verified = verifyWebhook<{ id: string; type: string; apiVersion: string; data: { environment: string } }>({
      rawBody: request!.body,
      headers: request!.headers,
      secrets: secret,
    });
    expect(verified.eventId).toBe(test.eventId);
    expect(verified.event).toMatchObject({ id: test.eventId, type: 'webhook.test', apiVersion: 'v2', data: { environment: 'test' } });
    expect(verified.timestamp).toBe(delivered.attempts[0]!.signatureTimestamp);
    // The payload shown is exactly what was signed and sent.
    expect(JSON.stringify(delivered.payload)).toBe(request!.body.toString('utf8'));

    const endpoint = await t.management.GET('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } } });
    expect(endpoint.data!.lastTest).toEqual({ deliveryId: test.id, eventId: test.eventId, progress: 'delivered', at: delivered.updatedAt });
  });

  it('sends a retried failed delivery to the current URL with the original event id and body, signed with the current secret', async () => {
    const t = await server.newTenant();
    failing.add('/down');
    const created = await t.management.POST('/v2/webhooks/endpoints', { body: { url: `${receiverUrl}/down` } });
    expect(created.response.status).toBe(201);
    const endpointId = created.data!.id;
    const order = await t.orders.POST('/v2/orders', { body: { merchantReference: 'cart-7834', amountMinor: 4999 } });
    expect(order.response.status).toBe(201);
    const listed = await t.management.GET('/v2/webhooks/deliveries', { params: { query: { q: order.data!.orderId } } });
    const deliveryId = listed.data!.data[0]!.id;

    // The engine's first attempt fails (503); the rest of the cycle is written as the engine
    // would, a day apart, so the test does not wait 16 hours.
    const first = await waitForAttempts(t, deliveryId, 1);
    expect(first.lastResponse).toMatchObject({ statusCode: 503, success: false, responseBody: '{"error":"maintenance"}' });
    // The remaining attempts of the cycle, through the queue's lease, the last one failing it.
    await failCycle(server.services, 'management-delivery-test', deliveryId);
    const failed = await getDelivery(t.management, deliveryId);
    expect(failed).toMatchObject({ state: 'failed', attemptCount: 10 });

    // Move the endpoint and rotate its secret, then retry.
    const moved = await t.management.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } }, body: { url: `${receiverUrl}/up` } });
    expect(moved.response.status).toBe(200);
    const rotated = await t.management.POST('/v2/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId } } });
    const currentSecret = rotated.data!.secret;
    const retry = await t.management.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId } } });
    expect(retry.data).toMatchObject({ state: 'pending', cycle: 2, attemptCount: 0, endpointVersion: 3, url: `${receiverUrl}/up` });

    const delivered = await waitForState(t, deliveryId, 'delivered');
    expect(delivered.attempts[0]).toMatchObject({ cycle: 2, number: 1, statusCode: 200, success: true });
    const atUp = requestsFor(failed.eventId).filter((r) => r.path === '/up');
    expect(atUp).toHaveLength(1);
    const downBody = requestsFor(failed.eventId).find((r) => r.path === '/down')!.body;
    expect(atUp[0]!.body.equals(downBody)).toBe(true);
    expect(verifyWebhook({ rawBody: atUp[0]!.body, headers: atUp[0]!.headers, secrets: currentSecret }).eventId).toBe(failed.eventId);
    expect(() => verifyWebhook({ rawBody: atUp[0]!.body, headers: atUp[0]!.headers, secrets: created.data!.secret })).toThrow();
  });
});

function waitForAttempts(t: TestTenant, deliveryId: string, count: number): Promise<DeliveryDetail> {
  return until(async () => {
    const d = await getDelivery(t.management, deliveryId);
    return d.attempts.length >= count && d.progress !== 'sending' && d;
  }, `${count} attempts of delivery ${deliveryId}`, 10_000);
}

