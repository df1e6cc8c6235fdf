// The webhook management API over HTTP: the callback secret, roles and keys, and tenant isolation.
import { beforeAll, describe, expect, it } from 'vitest';
import { createManagementClient } from '../../client/api.ts';
import { type TestTenant } from '../testing/harness.ts';
import { setupServer, ISO, SECRET, server, hookUrl, ok, expectProblem, createEndpoint, getEndpoint, patch, createOrder, allDeliveries, deliveryOfOrder, getDelivery, environment, failDelivery, keyWith, memberWith, type EndpointWithSecret, type Management } from './testing/management.ts';

setupServer();

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
