// Routing by event type (issue 68), end to end: three endpoints of one environment, one for
// order.paid, one for order.payment_review_required and one for every type (in the
// standard-webhooks scheme). A real server on loopback, a real receiver: each request is checked
// by our verifier against its endpoint's secret (and by the official standardwebhooks package for
// the endpoint in that scheme), and by no other endpoint's secret.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../delivery/testing.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { ok, type EndpointWithSecret } from './testing/management.ts';
import { until } from '../../testing/until.ts';

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function endpoint(t: TestTenant, path: string, body: { eventTypes?: string[]; signatureScheme?: 'standard-webhooks' }): Promise<EndpointWithSecret> {
  return ok(await t.management.POST('/v2/webhooks/endpoints', { body: { url: `${receiver.url}${path}`, ...body } }), 201);
}

/** The requests that carried event `eventId`, by the path they reached. */
function received(eventId: string): Map<string, ReceivedRequest> {
  const of = receiver.requests.filter((r) => JSON.parse(r.body.toString('utf8')).id === eventId);
  return new Map(of.map((r) => [r.url, r]));
}

/** Whether our verifier accepts the request with this secret. */
function verifies(r: ReceivedRequest, secret: string): boolean {
  try {
    verifyWebhook({ rawBody: r.body, headers: r.headers, secrets: secret });
    return true;
  } catch {
    return false;
  }
}

describe('several endpoints per environment, each subscribed to event types', () => {
  it('a paid order reaches the order.paid endpoint and the every-type one, each signed with its own secret, and not the review one', async () => {
    const t = await server.newTenant();
    const paid = await endpoint(t, '/paid', { eventTypes: ['order.paid'] });
    const review = await endpoint(t, '/review', { eventTypes: ['order.payment_review_required'] });
    const every = await endpoint(t, '/every', { signatureScheme: 'standard-webhooks' });

    const order = ok(await t.orders.POST('/v2/orders', { body: { merchantReference: 'fan-out-1', amountMinor: 4999, assetId: 'USDC', networkId: 'ethereum', amountBaseUnits: '49990000' } }), 201);
    ok(await t.sandbox.POST('/sandbox/orders/{orderId}/deposits', { params: { path: { orderId: order.orderId } }, body: { amountBaseUnits: '49990000', verified: true, txHash: `0x${'f0'.repeat(32)}` } }), 201);
    const events = ok(await t.orders.GET('/v2/events', { params: { query: { limit: 10 } } })).data;
    const created = events.find((e) => e.type === 'order.created')!;
    const paidEvent = events.find((e) => e.type === 'order.paid')!;

    // The activity shows each event's deliveries with their endpoints; the search by event id spans them.
    const listed = ok(await t.management.GET('/v2/webhooks/deliveries', { params: { query: { q: paidEvent.id } } })).data;
    expect(listed.map((d) => d.endpointId).sort()).toEqual([paid.id, every.id].sort());
    const createdListed = ok(await t.management.GET('/v2/webhooks/deliveries', { params: { query: { q: created.id } } })).data;
    expect(createdListed.map((d) => d.endpointId)).toEqual([every.id]);
    const byOrder = ok(await t.management.GET('/v2/webhooks/deliveries', { params: { query: { q: order.orderId } } })).data;
    expect(byOrder).toHaveLength(3);
    // Each endpoint's activity: its own deliveries only.
    const activityOf = async (endpointId: string) => ok(await t.management.GET('/v2/webhooks/deliveries', { params: { query: { endpointId } } })).data.map((d) => [d.endpointId, d.eventType]);
    expect(await activityOf(paid.id)).toEqual([[paid.id, 'order.paid']]);
    expect(await activityOf(every.id)).toEqual([[every.id, 'order.paid'], [every.id, 'order.created']]);
    expect(await activityOf(review.id)).toEqual([]);

    await until(() => received(paidEvent.id).size === 2 && received(created.id).size === 1, 'the order.paid event at two endpoints, order.created at one');
    const p = received(paidEvent.id);
    expect([...p.keys()].sort()).toEqual(['/every', '/paid']);
    expect([...received(created.id).keys()]).toEqual(['/every']);
    // Each request verifies with its endpoint's secret only.
    expect(verifies(p.get('/paid')!, paid.secret)).toBe(true);
    expect(verifies(p.get('/paid')!, every.secret)).toBe(false);
    expect(verifies(p.get('/paid')!, review.secret)).toBe(false);
    expect(verifies(p.get('/every')!, every.secret)).toBe(true);
    expect(verifies(p.get('/every')!, paid.secret)).toBe(false);
    new Webhook(every.secret).verify(p.get('/every')!.body.toString('utf8'), p.get('/every')!.headers as Record<string, string>);
    expect(() => new Webhook(paid.secret).verify(p.get('/every')!.body.toString('utf8'), p.get('/every')!.headers as Record<string, string>)).toThrow();
    // The same event id and bytes at both.
    expect(p.get('/paid')!.body.equals(p.get('/every')!.body)).toBe(true);
    expect(receiver.requests.some((r) => r.url === '/review')).toBe(false);
  });

  it('webhook.test goes to the endpoint it is sent from only, whatever its types', async () => {
    const t = await server.newTenant();
    const paid = await endpoint(t, '/test-paid', { eventTypes: ['order.paid'] });
    await endpoint(t, '/test-every', {});
    const test = ok(await t.management.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId: paid.id } } }), 201);
    expect(test.endpointId).toBe(paid.id);
    await until(() => received(test.eventId).size === 1, 'the test webhook at its endpoint');
    expect([...received(test.eventId).keys()]).toEqual(['/test-paid']);
    const all = ok(await t.management.GET('/v2/webhooks/deliveries', { params: { query: { q: test.eventId } } })).data;
    expect(all.map((d) => d.endpointId)).toEqual([paid.id]);
  });
});
