// Endpoint health through the API (issue 69): a receiver that answers 410 has its endpoint
// disabled (reason gone, shown in its representation), webhook_endpoint.disabled is in the
// feed, and nothing is lost: a replacement at the same URL recovers every event the disabled
// endpoint missed (missedBy), each with its original event id, once.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { until } from '../../testing/until.ts';

let server: TestServer;
let receiver: Server;
let url: string;
/** Answered 410 until the merchant "fixes" the receiver. */
let gone = true;
/** The event ids received while fixed, in arrival order. */
const fixed: string[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!gone) fixed.push(String(req.headers['service-event-id']));
      res.writeHead(gone ? 410 : 200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

it('a 410 disables the endpoint (reason gone); a replacement at the same URL recovers every event it missed, original ids, once', async () => {
  const t = await server.newTenant();
  const m = t.management;
  const created = await m.POST('/v2/webhooks/endpoints', { body: { url } });
  expect(created.response.status).toBe(201);
  const since = created.data!.createdAt;
  const old = created.data!.id;
  const order = async (ref: string) => (await t.orders.POST('/v2/orders', { body: { merchantReference: ref, amountMinor: 1000 } })).data!.orderId;
  await order('before-gone');
  const disabled = await until(async () => {
    const e = (await m.GET('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: old } } })).data!;
    return e.active ? null : e;
  }, 'the endpoint disabled after its 410');
  expect(disabled).toMatchObject({ active: false, disabledReason: 'gone', failingSince: expect.any(String), version: 2 });
  const listed = await t.orders.GET('/v2/events', { params: { query: { type: 'webhook_endpoint.disabled' } } });
  expect(listed.response.status, JSON.stringify(listed.error)).toBe(200);
  const feed = listed.data!.data;
  expect(feed).toMatchObject([{ type: 'webhook_endpoint.disabled', data: { endpointId: old, reason: 'gone', lastStatusCode: 410 } }]);

  // Raised while no endpoint is active: no delivery, but kept in the feed.
  await order('while-disabled-1');
  await order('while-disabled-2');
  gone = false;
  const replacement = (await m.POST('/v2/webhooks/endpoints', { body: { url } })).data!.id;
  const recover = () =>
    m.POST('/v2/webhooks/endpoints/{endpointId}/recover', { params: { path: { endpointId: replacement } }, body: { since, missedBy: old } });
  const r = await recover();
  expect(r.response.status, JSON.stringify(r.error)).toBe(202);
  expect(r.data).toMatchObject({ recovered: 3, nextSince: null });
  const missed = (await t.orders.GET('/v2/events', { params: { query: { type: 'order.created' } } })).data!.data.map((e) => e.id).reverse();
  await until(() => fixed.length >= 3, 'the three missed events delivered to the replacement');
  expect(fixed).toEqual(missed);
  // Once: the replacement now has them.
  expect((await recover()).data).toMatchObject({ recovered: 0 });
  // An endpoint that is not disabled is refused, with its pointer.
  const refused = await m.POST('/v2/webhooks/endpoints/{endpointId}/recover', { params: { path: { endpointId: replacement } }, body: { since, missedBy: replacement } });
  expect(refused.response.status).toBe(400);
  expect(refused.error).toMatchObject({ type: expect.stringContaining('validation-failed'), errors: [{ pointer: '/body/missedBy' }] });
});
