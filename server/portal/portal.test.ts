// The portal's rules over HTTP, without a browser: session, CSRF, roles, re-verification,
// tenant and environment isolation, the one-time secret, and the security headers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, setMemberActive } from '../domain/admin.ts';
import { ManualClock } from '../domain/clock.ts';
import type { Scope } from '../domain/context.ts';
import { getDelivery, listDeliveries } from '../domain/deliveries/deliveries.ts';
import { failCycle } from '../api/testing/management.ts';
import { listEndpoints } from '../domain/endpoints/endpoints.ts';
import type { EnvironmentName } from '../domain/model.ts';
import { answer, startReceiver, type Receiver } from '../delivery/testing.ts';
import { CONTENT_SECURITY_POLICY } from './mount.ts';
import { SESSION_COOKIE, SIGN_IN_COOKIE } from './session.ts';
import { csrfOf, PortalClient, startPortalTestServer, type PortalTestServer } from './testing.ts';
import { until } from '../../testing/until.ts';

const clock = new ManualClock(Date.UTC(2026, 10, 22, 9, 0, 0));
let server: PortalTestServer;
let receiver: Receiver;

beforeAll(async () => {
  // The tests' clients stand for a proxy on loopback: its X-Forwarded-Proto is believed (session.ts, isHttps).
  server = await startPortalTestServer({ clock, env: { TRUST_PROXY: '127.0.0.1' } });
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await server?.close();
});

async function signedIn(token: string, environment: EnvironmentName = 'test'): Promise<PortalClient> {
  const client = new PortalClient(server.portalUrl);
  const { res } = await client.signIn(token, environment);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe('/portal/webhooks');
  return client;
}

async function csrf(client: PortalClient): Promise<string> {
  return csrfOf((await client.get('/portal/webhooks')).html);
}

/** Adds the receiver as the endpoint through the portal; answers the endpoint id and the reveal page. */
async function addEndpoint(client: PortalClient, path = '/hooks'): Promise<{ endpointId: string; html: string; res: Response }> {
  const created = await client.post('/portal/webhooks/endpoints', { _csrf: await csrf(client), url: `${receiver.url}${path}` });
  expect(created.res.status).toBe(200);
  const id = /endpoints\/(whe_[0-9A-Z]+)\/test/.exec((await client.get('/portal/webhooks')).html)?.[1];
  if (!id) throw new Error('no active endpoint on the webhooks page');
  return { endpointId: id, ...created };
}

const secretIn = (html: string): string | undefined => /data-testid="signing-secret">(whsec_[A-Za-z0-9_-]+)</.exec(html)?.[1];

async function waitForAttempt(scope: Scope, deliveryId: string): Promise<void> {
  await until(async () => (await getDelivery(server.services, scope, deliveryId)).attempts.length > 0, `an attempt of ${deliveryId}`, 5_000);
}

describe('portal sign-in', () => {
  it('refuses a wrong token generically, an inactive member clearly, and a form without its CSRF token', async () => {
    const t = await server.newTenant();
    const client = new PortalClient(server.portalUrl);

    const wrong = await client.signIn('mt_definitely-not-a-token');
    expect(wrong.res.status).toBe(401);
    expect(wrong.html).toContain('That member token was not recognised');
    expect(client.cookie(SESSION_COOKIE)).toBeUndefined();

    const inactive = await createMember(server.services, { tenantId: t.tenantId, email: 'gone@merchant.example', role: 'developer', active: false });
    const refused = await client.signIn(inactive.memberToken);
    expect(refused.res.status).toBe(403);
    expect(refused.html).toContain('This member is inactive and cannot sign in');
    expect(client.cookie(SESSION_COOKIE)).toBeUndefined();

    // Login CSRF: the form's token must match the sign-in cookie of this browser.
    await client.get('/portal/sign-in');
    const forged = await client.post('/portal/sign-in', { _csrf: 'made-up', token: t.memberToken, environment: 'test' });
    expect(forged.res.status).toBe(403);
    expect(client.cookie(SESSION_COOKIE)).toBeUndefined();
  });

  it('keeps the session in a sealed HttpOnly SameSite=Strict cookie, __Host- prefixed over https', async () => {
    const t = await server.newTenant();
    const secure = new PortalClient(server.portalUrl, { headers: { 'x-forwarded-proto': 'https' } });
    const form = await secure.get('/portal/sign-in');
    expect(form.res.headers.getSetCookie().find((c) => c.startsWith(`__Host-${SIGN_IN_COOKIE}=`))).toMatch(/; Path=\/; .*Secure/);
    // A sign-in cookie without the prefix (one a sibling host under a shared domain could set) is not the form's.
    const tossed = new PortalClient(server.portalUrl, { headers: { 'x-forwarded-proto': 'https' } });
    tossed.setCookie(SIGN_IN_COOKIE, 'chosen-by-a-sibling-host');
    expect((await tossed.post('/portal/sign-in', { _csrf: 'chosen-by-a-sibling-host', token: t.memberToken })).res.status).toBe(403);
    const { res } = await secure.post('/portal/sign-in', { _csrf: csrfOf(form.html), token: t.memberToken, environment: 'test' });
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`__Host-${SESSION_COOKIE}=`)) ?? '';
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; Path=\/;/);
    expect(cookie).not.toMatch(/; Domain=/i);
    expect(cookie).toMatch(/; Max-Age=28800/);
    expect((await secure.get('/portal/webhooks')).res.status).toBe(200);
    // Sealed: neither the tenant nor the token can be read from it.
    expect(cookie).not.toContain(t.tenantId);
    expect(cookie).not.toContain(t.memberToken);

    const plain = await signedIn(t.memberToken);
    expect(plain.cookie(SESSION_COOKIE)).toMatch(/^v1\./);
    const { res: httpRes } = await new PortalClient(server.portalUrl).signIn(t.memberToken);
    expect(httpRes.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))).not.toMatch(/; Secure/);

    // A tampered cookie is no session.
    const sealed = plain.cookie(SESSION_COOKIE) ?? '';
    plain.setCookie(SESSION_COOKIE, `${sealed.slice(0, -4)}AAAA`);
    const after = await plain.get('/portal/webhooks');
    expect(after.res.status).toBe(303);
    expect(after.res.headers.get('location')).toBe('/portal/sign-in?ended=1');
  });

  it('ends the session when the member is deactivated, and after eight hours', async () => {
    const t = await server.newTenant();
    const dev = await createMember(server.services, { tenantId: t.tenantId, email: 'dev@merchant.example', role: 'developer' });
    const client = await signedIn(dev.memberToken);
    expect((await client.get('/portal/webhooks')).res.status).toBe(200);

    await setMemberActive(server.services, { tenantId: t.tenantId, memberId: dev.memberId, active: false });
    const page = await client.get('/portal/webhooks');
    expect(page.res.status).toBe(303);
    expect(page.res.headers.get('location')).toBe('/portal/sign-in?ended=1');
    expect((await client.get('/portal/api/last-test')).res.status).toBe(401);

    const admin = await signedIn(t.memberToken);
    clock.advance(8 * 60 * 60 * 1000 + 1000);
    const expired = await admin.get('/portal/webhooks');
    expect(expired.res.status).toBe(303);
    expect(expired.res.headers.get('location')).toBe('/portal/sign-in?ended=1');
  });
});

describe('portal forms and roles', () => {
  it('refuses every POST without the session CSRF token, changing nothing', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    const url = `${receiver.url}/csrf`;
    const forms: Array<Record<string, string>> = [{ url }, { url, _csrf: 'wrong' }, { url, _csrf: '' }];
    for (const form of forms) {
      const { res, html } = await client.post('/portal/webhooks/endpoints', form);
      expect(res.status).toBe(403);
      expect(html).toContain('security token');
    }
    expect(await listEndpoints(server.services, await server.scopeOf(t.tenantId))).toEqual([]);
    expect((await client.post('/portal/environment', { environment: 'live' })).res.status).toBe(403);
    expect((await client.post('/portal/sign-out', {})).res.status).toBe(403);
    // Still signed in, still in test.
    expect((await client.get('/portal/webhooks')).html).toContain('data-testid="environment">test<');
  });

  it('shows a viewer the activity read-only and answers 403 to every change it posts', async () => {
    const t = await server.newTenant();
    const admin = await signedIn(t.memberToken);
    const { endpointId } = await addEndpoint(admin);
    await admin.post(`/portal/webhooks/endpoints/${endpointId}/test`, { _csrf: await csrf(admin) });
    const scope = await server.scopeOf(t.tenantId);
    const [endpoint] = await listEndpoints(server.services, scope);
    const deliveryId = endpoint!.lastTest!.deliveryId;

    const viewer = await createMember(server.services, { tenantId: t.tenantId, email: 'viewer@merchant.example', role: 'viewer' });
    const client = await signedIn(viewer.memberToken);
    const page = await client.get('/portal/webhooks');
    expect(page.res.status).toBe(200);
    expect(page.html).toContain('data-testid="read-only-note"');
    expect(page.html).toContain(`data-delivery="${deliveryId}"`);
    for (const control of ['send-test', 'edit-url', 'rotate-secret', 'disable', 'add-webhook', 'recover']) expect(page.html).not.toContain(`data-testid="${control}"`);
    expect((await client.get(`/portal/webhooks/deliveries/${deliveryId}`)).res.status).toBe(200);

    const token = csrfOf(page.html);
    const posts: Array<[string, Record<string, string>]> = [
      ['/portal/webhooks/endpoints', { url: `${receiver.url}/viewer` }],
      [`/portal/webhooks/endpoints/${endpointId}/test`, {}],
      [`/portal/webhooks/endpoints/${endpointId}/edit`, { url: `${receiver.url}/viewer`, version: '1', confirm: 'yes' }],
      [`/portal/webhooks/endpoints/${endpointId}/disable`, { version: '1', confirm: 'yes', token: viewer.memberToken }],
      [`/portal/webhooks/endpoints/${endpointId}/rotate`, { version: '1', confirm: 'yes', token: viewer.memberToken }],
      [`/portal/webhooks/deliveries/${deliveryId}/retry`, {}],
      [`/portal/webhooks/endpoints/${endpointId}/recover`, { hours: '24' }],
    ];
    for (const [path, form] of posts) {
      const { res, html } = await client.post(path, { _csrf: token, ...form });
      expect(res.status, path).toBe(403);
      expect(html).toContain('cannot change webhooks');
      expect(html).not.toContain('whsec_');
    }
    for (const path of ['/portal/webhooks/new', `/portal/webhooks/endpoints/${endpointId}/rotate`, `/portal/webhooks/endpoints/${endpointId}/edit`]) {
      expect((await client.get(path)).res.status, path).toBe(403);
    }
    const after = await listEndpoints(server.services, scope);
    expect(after.map((v) => [v.endpoint.active, v.endpoint.version])).toEqual([[true, 1]]);
  });

  it('recovers the failed deliveries of a recent period with the Recover button', async () => {
    const t = await server.newTenant();
    const admin = await signedIn(t.memberToken);
    const { endpointId } = await addEndpoint(admin);
    const order = await t.orders.POST('/v2/orders', { body: { merchantReference: 'portal-recover', amountMinor: 500 } });
    expect(order.response.status).toBe(201);
    const scope = await server.scopeOf(t.tenantId);
    const { deliveries } = await listDeliveries(server.services, scope, { limit: 5, q: order.data!.orderId });
    const deliveryId = deliveries[0]!.delivery.id;
    await failCycle(server.services, 'portal-recover-test', deliveryId);
    expect((await getDelivery(server.services, scope, deliveryId)).delivery.state).toBe('failed');

    const page = await admin.get('/portal/webhooks');
    expect(page.html).toContain('data-testid="recover"');
    // An offered period only: not another number, nor a name every object has (`hours in {}` holds for `constructor`).
    for (const hours of ['5', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const bad = await admin.post(`/portal/webhooks/endpoints/${endpointId}/recover`, { _csrf: csrfOf(page.html), hours });
      expect(bad.res.status, hours).toBe(400);
      expect(bad.html, hours).toContain('Unknown period');
      expect((await getDelivery(server.services, scope, deliveryId)).delivery.state, hours).toBe('failed');
    }
    const done = await admin.post(`/portal/webhooks/endpoints/${endpointId}/recover`, { _csrf: csrfOf(page.html), hours: '24' });
    expect(done.res.status).toBe(303);
    expect(done.res.headers.get('location')).toBe('/portal/webhooks?done=recovered#activity');
    expect((await admin.get('/portal/webhooks?done=recovered')).html).toContain('Recovery queued');
    expect((await getDelivery(server.services, scope, deliveryId)).delivery).toMatchObject({ state: 'pending', cycle: 2 });
  });

  it('shows the broken destination rule when a URL is refused', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    const token = await csrf(client);
    const cases: Array<[string, string]> = [
      ['https://192.168.1.20/hooks', 'private-address'],
      ['https://hooks.merchant.example/x#frag', 'no-fragment'],
      ['https://user:pass@hooks.merchant.example/x', 'no-credentials'],
      ['not a url', 'invalid-url'],
    ];
    for (const [url, rule] of cases) {
      const { res, html } = await client.post('/portal/webhooks/endpoints', { _csrf: token, url });
      expect(res.status, url).toBe(400);
      expect(html).toContain(`data-testid="refused-rule">${rule}<`);
    }
    const long = await client.post('/portal/webhooks/endpoints', { _csrf: token, url: `https://hooks.merchant.example/${'a'.repeat(2100)}` });
    expect(long.res.status).toBe(400);
    expect(long.html).toContain('at most 2048 are allowed');
  });
});

describe('portal isolation', () => {
  it('never shows one tenant another tenant’s delivery or endpoint (404)', async () => {
    const a = await server.newTenant('Tenant A');
    const b = await server.newTenant('Tenant B');
    const clientA = await signedIn(a.memberToken);
    const { endpointId } = await addEndpoint(clientA, '/tenant-a');
    await clientA.post(`/portal/webhooks/endpoints/${endpointId}/test`, { _csrf: await csrf(clientA) });
    const [endpoint] = await listEndpoints(server.services, await server.scopeOf(a.tenantId));
    const { deliveryId, eventId } = endpoint!.lastTest!;
    expect((await clientA.get(`/portal/webhooks/deliveries/${deliveryId}`)).res.status).toBe(200);

    const clientB = await signedIn(b.memberToken);
    const tokenB = await csrf(clientB);
    const detail = await clientB.get(`/portal/webhooks/deliveries/${deliveryId}`);
    expect(detail.res.status).toBe(404);
    expect(detail.html).not.toContain(eventId);
    expect((await clientB.post(`/portal/webhooks/deliveries/${deliveryId}/retry`, { _csrf: tokenB })).res.status).toBe(404);
    expect((await clientB.get(`/portal/webhooks/endpoints/${endpointId}/rotate`)).res.status).toBe(404);
    expect((await clientB.post(`/portal/webhooks/endpoints/${endpointId}/test`, { _csrf: tokenB })).res.status).toBe(404);
    const search = await clientB.get(`/portal/webhooks/activity?q=${eventId}`);
    expect(search.html).toContain('data-testid="activity-empty"');
    expect((await clientB.get('/portal/webhooks')).html).not.toContain(deliveryId);
  });

  it('keeps the environment in the session: the switch changes it, a query parameter does not', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    const { endpointId } = await addEndpoint(client, '/test-env');

    const sneaky = await client.get('/portal/webhooks?environment=live');
    expect(sneaky.html).toContain('data-testid="environment">test<');
    expect(sneaky.html).toContain(endpointId);

    const switched = await client.post('/portal/environment', { _csrf: csrfOf(sneaky.html), environment: 'live' });
    expect(switched.res.status).toBe(303);
    const live = await client.get('/portal/webhooks');
    expect(live.html).toContain('data-testid="environment">live<');
    expect(live.html).toContain('data-testid="no-endpoint"');
    expect(live.html).not.toContain(endpointId);
    // The test endpoint is not reachable from live by id either.
    expect((await client.post(`/portal/webhooks/endpoints/${endpointId}/test`, { _csrf: csrfOf(live.html) })).res.status).toBe(404);
  });
});

describe('portal secrets', () => {
  it('adds several webhooks, each with the event types ticked (none: every type), and lists them newest first with their events', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    await addEndpoint(client, '/every');
    const form = await client.get('/portal/webhooks/new');
    expect(form.html).toContain('data-testid="event-type-order.paid"');
    const paid = await client.post('/portal/webhooks/endpoints', { _csrf: csrfOf(form.html), url: `${receiver.url}/paid`, 'type:order.paid': 'on' });
    expect(paid.res.status).toBe(200);
    const page = await client.get('/portal/webhooks');
    expect([...page.html.matchAll(/data-testid="endpoint-event-types">([^<]*)</g)].map((m) => m[1])).toEqual(['order.paid', 'Every order event']);
    expect(page.html).toContain('data-testid="add-webhook"');
    const views = await listEndpoints(server.services, await server.scopeOf(t.tenantId));
    expect(views.map((v) => [v.endpoint.url, v.endpoint.eventTypes])).toEqual([
      [`${receiver.url}/paid`, ['order.paid']],
      [`${receiver.url}/every`, null],
    ]);
    // Each endpoint's activity: five newest first, its own deliveries only, kept through search.
    const [paidView, everyView] = views;
    expect((await t.orders.POST('/v2/orders', { body: { merchantReference: 'portal-fan-out', amountMinor: 500 } })).response.status).toBe(201);
    const ofPaid = await client.get(`/portal/webhooks/activity?endpoint=${paidView!.endpoint.id}`);
    expect(ofPaid.html).toContain('data-testid="activity-endpoint"');
    expect(ofPaid.html).not.toContain('order.created');
    const ofEvery = await client.get(`/portal/webhooks/activity?endpoint=${everyView!.endpoint.id}`);
    expect(ofEvery.html).toContain('order.created');
    expect(ofEvery.html).toContain(`name="endpoint" value="${everyView!.endpoint.id}"`);
    // The same URL again is refused on the form (409), nothing added.
    const again = await client.post('/portal/webhooks/endpoints', { _csrf: await csrf(client), url: `${receiver.url}/paid` });
    expect(again.res.status).toBe(409);
    expect(await listEndpoints(server.services, await server.scopeOf(t.tenantId))).toHaveLength(2);
  });

  it('shows a Failing notice on an endpoint in a run of failures, and the reason of one the service disabled (issue 69)', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    const { endpointId } = await addEndpoint(client, '/health');
    const scope = await server.scopeOf(t.tenantId);
    const record = async () => (await server.services.store.read((tx) => tx.endpoints.get(scope.environmentId, endpointId)))!;
    const before = await record();
    await server.services.store.transaction((tx) => tx.endpoints.update({ ...before, failingSince: clock.now(), consecutiveFailures: 5 }));
    expect((await client.get('/portal/webhooks')).html).toContain('data-testid="endpoint-failing"');
    const e = await record();
    await server.services.store.transaction((tx) => tx.endpoints.update({ ...e, active: false, version: e.version + 1, disabledAt: clock.now(), disabledReason: 'gone' }));
    const page = (await client.get('/portal/webhooks')).html;
    expect(page).not.toContain('data-testid="endpoint-failing"');
    expect(/data-testid="disabled-reason">([^]*?)<\/span>/.exec(page)?.[1]).toContain('it answered 410 Gone');

    // Nothing lost: a replacement recovers every event the disabled one missed, through the proof-gated Recover route.
    const missedOrder = (await t.orders.POST('/v2/orders', { body: { merchantReference: 'missed-while-disabled', amountMinor: 700 } })).data!.orderId;
    const { endpointId: replacement } = await addEndpoint(client, '/health-2');
    const cards = (await client.get('/portal/webhooks')).html;
    expect(cards).toContain('data-testid="recover-missed-form"');
    const posted = await client.post(`/portal/webhooks/endpoints/${replacement}/recover`, { _csrf: csrfOf(cards), missedBy: endpointId });
    expect(posted.res.status).toBe(303);
    const toReplacement = await listDeliveries(server.services, scope, { q: missedOrder, limit: 5 });
    expect(toReplacement.deliveries.map((d) => d.delivery.endpointId)).toEqual([replacement]);
  });

  it('reveals the secret only in the answer to the POST, with no-store, and never again', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    const { endpointId, html, res } = await addEndpoint(client, '/secret');
    const secret = secretIn(html);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(html).toContain('you will not see it again');

    for (const path of ['/portal/webhooks', `/portal/webhooks/endpoints/${endpointId}/rotate`, `/portal/webhooks/endpoints/${endpointId}/edit`, '/portal/api/last-test']) {
      expect((await client.get(path)).html, path).not.toContain(secret);
    }
    // Posting the same form again (a reload of the reveal page) shows no secret.
    const again = await client.post('/portal/webhooks/endpoints', { _csrf: await csrf(client), url: `${receiver.url}/secret` });
    expect(again.res.status).toBe(409);
    expect(again.html).not.toContain('whsec_');
  });

  it('asks for the member token again before rotating or disabling once the sign-in is five minutes old', async () => {
    const t = await server.newTenant();
    const other = await createMember(server.services, { tenantId: t.tenantId, email: 'other-admin@merchant.example', role: 'administrator' });
    const client = await signedIn(t.memberToken);
    const { endpointId, html } = await addEndpoint(client, '/rotate');
    const first = secretIn(html);
    const scope = await server.scopeOf(t.tenantId);
    const version = async () => (await listEndpoints(server.services, scope))[0]!.endpoint.version;

    clock.advance(5 * 60 * 1000 + 1000);
    const confirm = await client.get(`/portal/webhooks/endpoints/${endpointId}/rotate`);
    expect(confirm.html).toContain('data-testid="reverify"');
    const token = csrfOf(confirm.html);
    const base = { _csrf: token, version: '1', confirm: 'yes' };

    const missing = await client.post(`/portal/webhooks/endpoints/${endpointId}/rotate`, base);
    expect(missing.res.status).toBe(403);
    expect(missing.html).not.toContain('whsec_');
    const someoneElse = await client.post(`/portal/webhooks/endpoints/${endpointId}/rotate`, { ...base, token: other.memberToken });
    expect(someoneElse.res.status).toBe(403);
    expect(someoneElse.html).toContain('not your member token');
    const disableStale = await client.post(`/portal/webhooks/endpoints/${endpointId}/disable`, base);
    expect(disableStale.res.status).toBe(403);
    expect(await version()).toBe(1);

    const rotated = await client.post(`/portal/webhooks/endpoints/${endpointId}/rotate`, { ...base, token: t.memberToken });
    expect(rotated.res.status).toBe(200);
    expect(rotated.res.headers.get('cache-control')).toBe('no-store');
    const second = secretIn(rotated.html);
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    expect(rotated.html).toContain('in flight may still carry a signature made with the previous secret');
    expect(await version()).toBe(2);

    // Replaying the rotation form (a reload) is refused: it was made for version 1.
    const replay = await client.post(`/portal/webhooks/endpoints/${endpointId}/rotate`, { ...base, token: t.memberToken });
    expect(replay.res.status).toBe(409);
    expect(replay.html).not.toContain('whsec_');
    expect(await version()).toBe(2);

    // The token just entered is a fresh sign-in: disabling needs no token now.
    const disable = await client.get(`/portal/webhooks/endpoints/${endpointId}/disable`);
    expect(disable.html).not.toContain('data-testid="reverify"');
    const unconfirmed = await client.post(`/portal/webhooks/endpoints/${endpointId}/disable`, { _csrf: token, version: '2' });
    expect(unconfirmed.res.status).toBe(200);
    expect(unconfirmed.html).toContain('data-testid="confirm-disable"');
    expect(await version()).toBe(2);
    const disabled = await client.post(`/portal/webhooks/endpoints/${endpointId}/disable`, { _csrf: token, version: '2', confirm: 'yes' });
    expect(disabled.res.status).toBe(303);
    expect(disabled.res.headers.get('location')).toBe('/portal/webhooks?done=disabled');
    const [after] = await listEndpoints(server.services, scope);
    expect([after!.endpoint.active, after!.endpoint.version]).toEqual([false, 3]);
  });

  it('asks to confirm a URL edit on its own page before changing anything', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    const { endpointId } = await addEndpoint(client, '/before');
    const token = await csrf(client);
    const review = await client.post(`/portal/webhooks/endpoints/${endpointId}/edit`, { _csrf: token, version: '1', url: `${receiver.url}/after` });
    expect(review.res.status).toBe(200);
    expect(review.html).toContain('data-testid="confirm-edit"');
    expect(review.html).toContain('Pending deliveries of version 1 become disabled');
    const scope = await server.scopeOf(t.tenantId);
    expect((await listEndpoints(server.services, scope))[0]!.endpoint.url).toBe(`${receiver.url}/before`);
    const refused = await client.post(`/portal/webhooks/endpoints/${endpointId}/edit`, { _csrf: token, version: '1', url: 'https://10.0.0.8/after' });
    expect(refused.res.status).toBe(400);
    expect(refused.html).toContain('data-testid="refused-rule">private-address<');
    const done = await client.post(`/portal/webhooks/endpoints/${endpointId}/edit`, { _csrf: token, version: '1', url: `${receiver.url}/after`, confirm: 'yes' });
    expect(done.res.status).toBe(303);
    const [after] = await listEndpoints(server.services, scope);
    expect([after!.endpoint.url, after!.endpoint.version]).toEqual([`${receiver.url}/after`, 2]);
  });

  it('chooses the signature scheme when adding a webhook and changes it on the endpoint card, keeping the version', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    const form = await client.get('/portal/webhooks/new');
    expect(form.html).toContain('data-testid="signature-scheme"');
    const created = await client.post('/portal/webhooks/endpoints', { _csrf: csrfOf(form.html), url: `${receiver.url}/scheme`, signatureScheme: 'standard-webhooks' });
    expect(created.res.status).toBe(200);
    const scope = await server.scopeOf(t.tenantId);
    const [first] = await listEndpoints(server.services, scope);
    expect(first!.endpoint.signatureScheme).toBe('standard-webhooks');
    const card = await client.get('/portal/webhooks');
    expect(card.html).toContain('Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)');
    const token = csrfOf(card.html);
    const bad = await client.post(`/portal/webhooks/endpoints/${first!.endpoint.id}/scheme`, { _csrf: token, version: '1', signatureScheme: 'hmac-md5' });
    expect(bad.res.status).toBe(400);
    const done = await client.post(`/portal/webhooks/endpoints/${first!.endpoint.id}/scheme`, { _csrf: token, version: '1', signatureScheme: 'both' });
    expect(done.res.status).toBe(303);
    expect(done.res.headers.get('location')).toBe('/portal/webhooks?done=scheme-changed');
    const [after] = await listEndpoints(server.services, scope);
    expect([after!.endpoint.signatureScheme, after!.endpoint.version]).toEqual(['both', 1]);
  });

  it('sets a rate cap when adding a webhook, changes it on the endpoint card and removes it with an empty field, keeping the version; out of range is 400', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    const form = await client.get('/portal/webhooks/new');
    expect(form.html).toContain('data-testid="max-per-second"');
    const refused = await client.post('/portal/webhooks/endpoints', { _csrf: csrfOf(form.html), url: `${receiver.url}/rate`, signatureScheme: 'service-signature', maxPerSecond: '0' });
    expect(refused.res.status).toBe(400);
    const scope = await server.scopeOf(t.tenantId);
    expect(await listEndpoints(server.services, scope)).toEqual([]);
    const created = await client.post('/portal/webhooks/endpoints', { _csrf: csrfOf(form.html), url: `${receiver.url}/rate`, signatureScheme: 'service-signature', maxPerSecond: '20' });
    expect(created.res.status).toBe(200);
    const [first] = await listEndpoints(server.services, scope);
    expect(first!.endpoint.maxPerSecond).toBe(20);
    const card = await client.get('/portal/webhooks');
    expect(card.html).toContain('At most 20 a second');
    const token = csrfOf(card.html);
    const path = `/portal/webhooks/endpoints/${first!.endpoint.id}/scheme`;
    expect((await client.post(path, { _csrf: token, version: '1', signatureScheme: 'service-signature', maxPerSecond: '1001' })).res.status).toBe(400);
    expect((await client.post(path, { _csrf: token, version: '1', signatureScheme: 'service-signature', maxPerSecond: '5' })).res.status).toBe(303);
    const [after] = await listEndpoints(server.services, scope);
    expect([after!.endpoint.maxPerSecond, after!.endpoint.version]).toEqual([5, 1]);
    expect((await client.post(path, { _csrf: token, version: '1', signatureScheme: 'service-signature', maxPerSecond: '' })).res.status).toBe(303);
    const [removed] = await listEndpoints(server.services, scope);
    expect([removed!.endpoint.maxPerSecond, removed!.endpoint.version]).toEqual([null, 1]);
    expect((await client.get('/portal/webhooks')).html).toContain('No cap');
  });
});

describe('portal pages', () => {
  it('sends the Content-Security-Policy and the other security headers on every portal response', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    for (const path of ['/portal/sign-in', '/portal/webhooks', '/portal/webhooks/activity', '/portal/no-such-page', '/portal/api/last-test', '/portal/assets/portal.js', '/portal/assets/portal.css']) {
      const { res } = await client.get(path);
      expect(res.headers.get('content-security-policy'), path).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
    const page = await client.get('/portal/webhooks');
    expect(page.res.headers.get('cache-control')).toBe('no-store');
    // No inline script or style anywhere: the policy would block them.
    expect(page.html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page.html).not.toMatch(/\sstyle=|<style/);
    expect(page.html).not.toMatch(/\son[a-z]+=/);
  });

  it('shows a hostile receiver body as text', async () => {
    const hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>';
    const own = await startReceiver({ handler: answer(500, hostile, { 'content-type': 'text/html' }) });
    try {
      const t = await server.newTenant();
      const client = await signedIn(t.memberToken);
      const created = await client.post('/portal/webhooks/endpoints', { _csrf: await csrf(client), url: `${own.url}/hostile` });
      expect(created.res.status).toBe(200);
      const scope = await server.scopeOf(t.tenantId);
      const id = (await listEndpoints(server.services, scope))[0]!.endpoint.id;
      await client.post(`/portal/webhooks/endpoints/${id}/test`, { _csrf: await csrf(client) });
      const deliveryId = (await listEndpoints(server.services, scope))[0]!.lastTest!.deliveryId;
      await waitForAttempt(scope, deliveryId);
      const { html } = await client.get(`/portal/webhooks/deliveries/${deliveryId}`);
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;');
      expect(html).not.toContain('<script>alert(1)');
      expect(html).not.toContain('<img');
    } finally {
      await own.close();
    }
  });

  it('pages the activity five at a time with a cursor link that works without the script', async () => {
    const t = await server.newTenant();
    const client = await signedIn(t.memberToken);
    const { endpointId } = await addEndpoint(client, '/paging');
    const token = await csrf(client);
    for (let i = 0; i < 7; i++) await client.post(`/portal/webhooks/endpoints/${endpointId}/test`, { _csrf: token });
    const first = await client.get('/portal/webhooks');
    const ids = (html: string) => [...html.matchAll(/data-delivery="(dlv_[0-9A-Z]+)"/g)].map((m) => m[1]);
    expect(ids(first.html)).toHaveLength(5);
    expect(first.html).toContain('data-load-more');
    const href = /href="(\/portal\/webhooks\/activity\?cursor=[^"]+)"/.exec(first.html)?.[1]?.replaceAll('&amp;', '&');
    expect(href).toBeDefined();
    const second = await client.get(href!);
    expect(second.res.status).toBe(200);
    expect(ids(second.html)).toHaveLength(2);
    expect(new Set([...ids(first.html), ...ids(second.html)]).size).toBe(7);
    expect(second.html).not.toContain('data-load-more');
    // A cursor that was never issued falls back to the newest page with a note.
    const bogus = await client.get('/portal/webhooks/activity?cursor=not-a-cursor');
    expect(bogus.res.status).toBe(200);
    expect(bogus.html).toContain('data-testid="activity-error"');
    expect(ids(bogus.html)).toHaveLength(5);
  });
});
