// The webhook management API over HTTP: endpoints, their one-time secrets and versions, destination rules, test webhooks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManagementClient } from '../../client/api.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { MAX_ACTIVE_ENDPOINTS } from '../../generated/vocabulary.ts';
import { fakeResolver } from '../delivery/testing.ts';
import { setupServer, ISO, SECRET, HEX64, server, hookUrl, ok, expectProblem, createEndpoint, getEndpoint, patch, createOrder, allDeliveries, deliveryOfOrder, getDelivery, environment, endpointRecord, failDelivery } from './testing/management.ts';

setupServer();

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
      signatureScheme: 'service-signature',
      eventTypes: null,
      maxPerSecond: null,
      active: true,
      version: 1,
      createdAt: expect.stringMatching(ISO),
      updatedAt: created.createdAt,
      disabledAt: null,
      disabledReason: null,
      failingSince: null,
      lastTest: null,
      secret: expect.stringMatching(SECRET),
    });
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(33);
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

  it('takes several active endpoints at different URLs; the same URL twice is 409 endpoint-exists, also by PATCH and under a race', async () => {
    const t = await server.newTenant();
    const first = await createEndpoint(t.management);
    const second = await createEndpoint(t.management, hookUrl('/other'));
    expectProblem(await t.management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl() } }), 409, 'endpoint-exists');
    expectProblem(await patch(t.management, second.id, { url: hookUrl() }), 409, 'endpoint-exists');
    expect(await getEndpoint(t.management, second.id)).toMatchObject({ url: hookUrl('/other'), version: 1 });
    expect(ok(await t.management.GET('/v2/webhooks/endpoints')).data.map((e) => e.id)).toEqual([second.id, first.id]);

    // Concurrent creations at one URL on an empty environment: exactly one wins.
    const u = await server.newTenant();
    const results = await Promise.all([1, 2, 3, 4].map(() => u.management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/race') } })));
    expect(results.map((r) => r.response.status).sort()).toEqual([201, 409, 409, 409]);
    expect(ok(await u.management.GET('/v2/webhooks/endpoints')).data).toHaveLength(1);
  });

  it(`takes up to ${MAX_ACTIVE_ENDPOINTS} active endpoints: one more is 409 endpoint-limit-reached, also under a race; a disabled one frees a place`, async () => {
    const t = await server.newTenant();
    const made = [];
    for (let i = 1; i < MAX_ACTIVE_ENDPOINTS; i++) made.push(await createEndpoint(t.management, hookUrl(`/limit-${i}`)));
    // The last place, asked for four times at once: exactly one gets it.
    const racing = await Promise.all([1, 2, 3, 4].map((i) => t.management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl(`/last-${i}`) } })));
    expect(racing.map((r) => r.response.status).sort()).toEqual([201, 409, 409, 409]);
    for (const r of racing.filter((x) => x.response.status === 409)) expectProblem(r, 409, 'endpoint-limit-reached');
    expect(ok(await t.management.GET('/v2/webhooks/endpoints')).data).toHaveLength(MAX_ACTIVE_ENDPOINTS);
    ok(await patch(t.management, made[0]!.id, { active: false }));
    await createEndpoint(t.management, hookUrl('/freed'));
    expectProblem(await t.management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/one-more') } }), 409, 'endpoint-limit-reached');
  });

  it('eventTypes: every type by default (null), a list as given; an unknown type is 422 unknown-event-type naming its pointer, by POST and PATCH', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const paid = ok(await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/paid'), eventTypes: ['order.paid'] } }), 201);
    expect(paid.eventTypes).toEqual(['order.paid']);
    const bad = await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/bad'), eventTypes: ['order.paid', 'order.refunded'] } });
    expect(expectProblem(bad, 422, 'unknown-event-type').errors).toEqual([{ pointer: '/body/eventTypes/1', detail: expect.stringContaining('order.refunded') }]);
    const test = await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/bad'), eventTypes: ['webhook.test'] } });
    expect(expectProblem(test, 422, 'unknown-event-type').errors).toEqual([{ pointer: '/body/eventTypes/0', detail: expect.any(String) }]);
    const patched = await patch(m, paid.id, { eventTypes: ['payout.completed'] });
    expect(expectProblem(patched, 422, 'unknown-event-type').errors).toEqual([{ pointer: '/body/eventTypes/0', detail: expect.any(String) }]);
    // Shapes the schema refuses are 400: empty, repeated, not a string.
    for (const eventTypes of [[], ['order.paid', 'order.paid'], [7]]) {
      expectProblem(await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/bad'), eventTypes } as never }), 400, 'validation-failed');
    }
    expect(ok(await m.GET('/v2/webhooks/endpoints')).data.map((e) => [e.id, e.eventTypes])).toEqual([[paid.id, ['order.paid']]]);
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


describe('PATCH /v2/webhooks/endpoints/{endpointId} and rotate-secret', () => {
  it('choose the signature scheme: at creation, then by PATCH without a new version, pending deliveries kept; unknown values and an empty change are 400', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const created = ok(await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl(), signatureScheme: 'standard-webhooks' } }), 201);
    expect(created.signatureScheme).toBe('standard-webhooks');
    const pending = await createOrder(t);
    const changed = ok(await patch(m, created.id, { signatureScheme: 'both' }));
    expect(changed).toEqual({ ...created, secret: undefined, signatureScheme: 'both', updatedAt: expect.stringMatching(ISO) });
    expect(await deliveryOfOrder(m, pending)).toMatchObject({ state: 'pending', endpointVersion: 1 });
    const both = ok(await patch(m, created.id, { url: hookUrl('/v2'), signatureScheme: 'service-signature' }));
    expect([both.url, both.signatureScheme, both.version]).toEqual([hookUrl('/v2'), 'service-signature', 2]);
    expectProblem(await patch(m, created.id, { signatureScheme: 'hmac-md5' } as never), 400, 'validation-failed');
    expectProblem(await patch(m, created.id, {} as never), 400, 'validation-failed');
    expectProblem(await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl(), signatureScheme: 'v1a' } as never }), 400, 'validation-failed');
  });

  it('maxPerSecond: none by default (null), as given at creation, changed or removed (null) by PATCH without a new version, pending deliveries kept; outside 1..1000 is 400', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const created = ok(await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl(), maxPerSecond: 20 } }), 201);
    expect(created.maxPerSecond).toBe(20);
    expect((await endpointRecord(t.tenantId, created.id)).maxPerSecond).toBe(20);
    const pending = await createOrder(t);
    const changed = ok(await patch(m, created.id, { maxPerSecond: 5 }));
    expect(changed).toEqual({ ...created, secret: undefined, maxPerSecond: 5, updatedAt: expect.stringMatching(ISO) });
    expect(await deliveryOfOrder(m, pending)).toMatchObject({ state: 'pending', endpointVersion: 1 });
    const removed = ok(await patch(m, created.id, { maxPerSecond: null }));
    expect(removed).toMatchObject({ id: created.id, url: created.url, signatureScheme: created.signatureScheme, maxPerSecond: null, active: true, version: 1 });
    expect(await getEndpoint(m, created.id)).toMatchObject({ maxPerSecond: null, version: 1 });
    expect((await endpointRecord(t.tenantId, created.id)).maxPerSecond).toBeNull();
    expect(await deliveryOfOrder(m, pending)).toMatchObject({ state: 'pending', endpointVersion: 1 });
    expect(ok(await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/uncapped') } }), 201).maxPerSecond).toBeNull();
    for (const bad of [0, 1001, 2.5, '20', '5']) expectProblem(await patch(m, created.id, { maxPerSecond: bad } as never), 400, 'validation-failed');
    // Only a change removes a cap: creation takes none to remove.
    for (const bad of [0, 1001, 2.5, '20', null]) expectProblem(await m.POST('/v2/webhooks/endpoints', { body: { url: hookUrl('/bad'), maxPerSecond: bad } as never }), 400, 'validation-failed');
  });

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
    expect(disabled).toMatchObject({ id: created.id, active: false, version: 4, disabledAt: disabled.updatedAt, disabledReason: 'requested', url: hookUrl('/webhooks-v2') });
    expect(await deliveryOfOrder(m, v3Order)).toMatchObject({ state: 'disabled', endpointVersion: 3 });

    // Without an active endpoint an order gets no delivery, and the activity stays visible.
    const unsent = await createOrder(t);
    expect(await allDeliveries(m, unsent)).toEqual([]);
    const activity = await allDeliveries(m);
    expect(activity.map((d) => d.orderId)).toEqual([v3Order, ...[...v2Orders].reverse(), ...[...v1Orders].reverse()]);
    expect(activity.every((d) => d.state === 'disabled')).toBe(true);
    expect(await getEndpoint(m, created.id)).toEqual(disabled);
  });

  it('an eventTypes change raises the version and disables only that endpoint’s older pending deliveries, not its sibling’s', async () => {
    const t = await server.newTenant();
    const m = t.management;
    const changed = await createEndpoint(m, hookUrl('/changed'));
    const sibling = await createEndpoint(m, hookUrl('/sibling'));
    const before = await createOrder(t);
    const both = await allDeliveries(m, before);
    expect(both.map((d) => [d.endpointId, d.state]).sort()).toEqual([[changed.id, 'pending'], [sibling.id, 'pending']].sort());
    const edited = ok(await patch(m, changed.id, { eventTypes: ['order.paid'] }));
    expect(edited).toMatchObject({ eventTypes: ['order.paid'], version: 2, url: hookUrl('/changed') });
    const after = await allDeliveries(m, before);
    expect(after.find((d) => d.endpointId === changed.id)).toMatchObject({ state: 'disabled', endpointVersion: 1 });
    expect(after.find((d) => d.endpointId === sibling.id)).toMatchObject({ state: 'pending', endpointVersion: 1 });
    // order.created no longer reaches the changed endpoint.
    expect((await allDeliveries(m, await createOrder(t))).map((d) => d.endpointId)).toEqual([sibling.id]);
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
