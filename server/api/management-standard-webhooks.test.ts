// Proof with code nobody here wrote (issue 40): the official `standardwebhooks` package verifies
// every request the running server sends to an endpoint in the `standard-webhooks` scheme: first
// attempts, retries (the receiver refuses the first two attempts of each message), a secret
// rotation, a test webhook and a manual retry of a failed delivery. A real server on loopback, a
// real receiver; the library gets the secret exactly as the management API showed it.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../delivery/testing.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { failCycle, ok, type Delivery, type EndpointWithSecret } from './testing/management.ts';
import { until } from '../../testing/until.ts';

/** Attempts refused (503) per message before the receiver answers 200: each message is retried twice. */
const REFUSED_ATTEMPTS = 2;

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  // Refuses the first attempts of each message (by webhook-id), and everything sent to /down.
  const seen = new Map<string, number>();
  receiver = await startReceiver({
    handler: (req, res) => {
      const id = String(req.headers['webhook-id'] ?? '');
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      const refuse = req.url === '/down' || n <= REFUSED_ATTEMPTS;
      res.writeHead(refuse ? 503 : 200, { 'content-type': 'application/json' }).end(refuse ? '{"error":"busy"}' : '{"received":true}');
    },
  });
  // A retry schedule 100 times shorter: the retries after about 50 ms and 300 ms.
  server = await startTestServer({ env: { WEBHOOK_RETRY_SCALE: '0.01' } });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function delivery(t: TestTenant, deliveryId: string): Promise<Delivery & { eventId: string; state: string }> {
  return ok(await t.management.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId } } }));
}

function waitDelivered(t: TestTenant, ids: readonly string[]): Promise<Array<{ eventId: string }>> {
  return until(async () => {
    const all = await Promise.all(ids.map((id) => delivery(t, id)));
    return all.every((d) => d.state === 'delivered') && all;
  }, `deliveries ${ids.join(', ')} delivered`);
}

async function orderDelivery(t: TestTenant, reference: string): Promise<string> {
  const order = ok(await t.orders.POST('/v2/orders', { body: { merchantReference: reference, amountMinor: 4999 } }), 201);
  const listed = ok(await t.management.GET('/v2/webhooks/deliveries', { params: { query: { q: order.orderId } } }));
  const id = listed.data[0]?.id;
  if (id === undefined) throw new Error(`order ${order.orderId} has no delivery`);
  return id;
}

/** What the official library says of one received request, with the secret of its time. */
function officialVerdict(r: ReceivedRequest, secret: string): 'verified' | string {
  try {
    new Webhook(secret).verify(r.body.toString('utf8'), r.headers as Record<string, string>);
    return 'verified';
  } catch (err) {
    return `${r.url} ${String(r.headers['webhook-id'])}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

describe('an endpoint in the standard-webhooks scheme, checked by the official standardwebhooks package', () => {
  it('verifies 100 % of the deliveries: first attempts, retries, a rotation, a test webhook and a manual retry', async () => {
    const t = await server.newTenant();
    const created: EndpointWithSecret = ok(
      await t.management.POST('/v2/webhooks/endpoints', { body: { url: `${receiver.url}/hooks`, signatureScheme: 'standard-webhooks' } }),
      201,
    );
    expect(created.signatureScheme).toBe('standard-webhooks');
    const endpointId = created.id;
    const secrets: Array<{ secret: string; from: number }> = [{ secret: created.secret, from: 0 }];

    // Before the rotation: three orders and a test webhook, each refused twice, then accepted.
    const before = await Promise.all(['sw-1', 'sw-2', 'sw-3'].map((ref) => orderDelivery(t, ref)));
    const test = ok(await t.management.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId } } }), 201);
    await waitDelivered(t, [...before, test.id]);

    // The rotation: from here on the new secret signs.
    const rotated = ok(await t.management.POST('/v2/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId } } }));
    secrets.push({ secret: rotated.secret, from: receiver.requests.length });
    const after = await Promise.all(['sw-4', 'sw-5'].map((ref) => orderDelivery(t, ref)));
    await waitDelivered(t, after);

    // A manual retry: a delivery to /down fails its cycle; the endpoint comes back to /hooks and the retry is sent there.
    ok(await t.management.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } }, body: { url: `${receiver.url}/down` } }));
    const lost = await orderDelivery(t, 'sw-6');
    // The worker's first attempt reaches /down before the cycle is failed by hand: failCycle's
    // claim could otherwise take the delivery first (a loaded CI run did), and /down never sees it.
    const { eventId: lostEvent } = await delivery(t, lost);
    await until(() => receiver.requests.some((r) => r.url === '/down' && r.headers['webhook-id'] === lostEvent), `the first attempt of ${lostEvent} at /down`);
    await failCycle(server.services, 'standard-webhooks-test', lost);
    ok(await t.management.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } }, body: { url: `${receiver.url}/hooks` } }));
    ok(await t.management.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId: lost } } }));
    const [retried] = await waitDelivered(t, [lost]);

    const requests = receiver.requests.filter((r) => r.headers['webhook-id'] !== undefined);
    const secretAt = (i: number): string => secrets.filter((s) => s.from <= receiver.requests.indexOf(requests[i]!)).at(-1)!.secret;
    const verdicts = requests.map((r, i) => officialVerdict(r, secretAt(i)));
    const failures = verdicts.filter((v) => v !== 'verified');
    expect(failures).toEqual([]);

    // What was verified: every message, each retried, the manual retry with the original id.
    const ids = requests.map((r) => String(r.headers['webhook-id']));
    const messages = new Set(ids);
    expect(messages.size).toBe(before.length + 1 + after.length + 1);
    for (const id of messages) expect(ids.filter((x) => x === id).length).toBeGreaterThanOrEqual(REFUSED_ATTEMPTS + 1);
    expect(ids).toContain(retried!.eventId);
    expect(requests.filter((r) => r.url === '/down').map((r) => r.headers['webhook-id'])).toContain(retried!.eventId);
    // Only the scheme's headers; each webhook-id is the body's id.
    for (const r of requests) {
      expect(r.headers['service-signature']).toBeUndefined();
      expect(JSON.parse(r.body.toString('utf8')).id).toBe(r.headers['webhook-id']);
    }
    // The old secret does not verify what the new one signed.
    const late = requests.findLast((r) => r.headers['webhook-id'] === retried!.eventId)!;
    expect(officialVerdict(late, created.secret)).not.toBe('verified');
    console.log(`standardwebhooks verified ${verdicts.length - failures.length}/${verdicts.length} requests (${messages.size} messages, ${requests.length - messages.size} retries)`);
  });

  it('in `both`, one request carries both header sets: the official package and verifyWebhook each verify theirs', async () => {
    const t = await server.newTenant();
    const created = ok(await t.management.POST('/v2/webhooks/endpoints', { body: { url: `${receiver.url}/hooks` } }), 201);
    expect(created.signatureScheme).toBe('service-signature');
    const changed = ok(await t.management.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId: created.id } }, body: { signatureScheme: 'both' } }));
    // A scheme change alone keeps the version.
    expect(changed).toMatchObject({ signatureScheme: 'both', version: created.version });
    const id = await orderDelivery(t, 'both-1');
    const [done] = await waitDelivered(t, [id]);
    const last = receiver.requests.findLast((r) => r.headers['webhook-id'] === done!.eventId)!;
    expect(officialVerdict(last, created.secret)).toBe('verified');
    expect(verifyWebhook({ rawBody: last.body, headers: last.headers, secrets: created.secret }).eventId).toBe(done!.eventId);
    expect(last.headers['service-event-id']).toBe(last.headers['webhook-id']);
  });
});
