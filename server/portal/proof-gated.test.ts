// Every proof-gated route of the portal at route level, without a browser (Hono's app.request on
// https://portal.merchant.example, so the cookies are __Host- ones): the table of
// PROOF_GATED_ROUTES is walked with the proof fresh, stale, for the wrong purpose and of another
// member, and docs/operations.md must list the same table; the routes are registered from it.
// Then what ends a session, and the per-address limits behind TRUST_PROXY. Passkeys are a software authenticator's (real ES256).
import { readFileSync } from 'node:fs';
import { Hono, type Context } from 'hono';
import type { RouterRoute } from 'hono/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, endMemberSessions, setMemberActive } from '../domain/admin.ts';
import { ManualClock } from '../domain/clock.ts';
import { createEndpoint, listEndpoints, sendTestWebhook } from '../domain/endpoints/endpoints.ts';
import { getDelivery } from '../domain/deliveries/deliveries.ts';
import { failCycle } from '../api/testing/management.ts';
import { memberPasskeys, revokeMemberPasskeys } from '../domain/passkeys.ts';
import { buildApp } from '../app/build-app.ts';
import type { AppEnv } from '../http/app-env.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { FAILURE_LIMITS, OPTIONS_LIMIT } from './passkeys/window-limiter.ts';
import { SoftAuthenticator } from './passkeys/testing/soft-authenticator.ts';
import type { PortalEnv } from './env.ts';
import { portalApp } from './mount.ts';
import { checkProofGates, gated } from './proof.tsx';
import { PROOF_GATED_ROUTES, type ProofGatedRoute } from './proof-gated.ts';
import { csrfOf, PortalClient } from './testing.ts';

const ORIGIN = 'https://portal.merchant.example';
const REVERIFY_AFTER_MS = 60_000;
const clock = new ManualClock(Date.UTC(2026, 10, 22, 9, 0, 0));
let server: TestServer;
let app: Hono<AppEnv>;
let addressCounter = 0;

beforeAll(async () => {
  server = await startTestServer({
    clock,
    env: { PORTAL_ORIGIN: ORIGIN, PORTAL_REVERIFY_AFTER: '60s', TRUST_PROXY: '1' },
    build: (services, config) => {
      const built = buildApp(services, config);
      app = built.app;
      return built;
    },
  });
});
afterAll(() => server?.close());

/** A browser at its own address (the proxy in front of the server names it in X-Forwarded-For). */
const browser = (address = `198.51.100.${++addressCounter % 250}`) =>
  new PortalClient(ORIGIN, { fetch: (url, init) => app.request(url, init), headers: { 'x-forwarded-for': address } });

interface Member {
  tenantId: string;
  memberId: string;
  token: string;
  auth: SoftAuthenticator;
  client: PortalClient;
}

async function signInWithToken(client: PortalClient, token: string): Promise<void> {
  const { res } = await client.signIn(token);
  expect(res.status).toBe(303);
}

async function signInWithPasskey(client: PortalClient, auth: SoftAuthenticator): Promise<Response> {
  const form = await client.get('/portal/sign-in');
  const _csrf = csrfOf(form.html);
  const options = await client.post('/portal/sign-in/passkey/options', { _csrf });
  expect(options.res.status).toBe(200);
  return (await client.post('/portal/sign-in/passkey', { _csrf, environment: 'test', credential: JSON.stringify(auth.assert(JSON.parse(options.html))) })).res;
}

const sessionCsrf = async (client: PortalClient) => csrfOf((await client.get('/portal/webhooks')).html);

/** Adds a passkey through the routes (the session must be fresh). */
async function addPasskey(client: PortalClient, auth: SoftAuthenticator, name = 'Laptop'): Promise<void> {
  const _csrf = await sessionCsrf(client);
  expect((await client.post('/portal/account/passkeys/add', { _csrf, name })).html).toContain('create-passkey-page');
  const options = await client.post('/portal/api/passkeys/registration-options', { _csrf });
  expect(options.res.status).toBe(200);
  const added = await client.post('/portal/account/passkeys', { _csrf, name, credential: JSON.stringify(auth.register(JSON.parse(options.html))) });
  expect(added.res.headers.get('location')).toBe('/portal/account/passkeys?done=added');
}

/** An administrator signed in with the token, holding one passkey; `tenantId` to join another's tenant. */
async function member(tenantId?: string): Promise<Member> {
  const tenant = tenantId ?? (await server.newTenant()).tenantId;
  const created = await createMember(server.services, { tenantId: tenant, email: `m${++addressCounter}@merchant.example`, role: 'administrator' });
  const client = browser();
  await signInWithToken(client, created.memberToken);
  const auth = new SoftAuthenticator(ORIGIN, 'portal.merchant.example');
  await addPasskey(client, auth);
  return { tenantId: tenant, memberId: created.memberId, token: created.memberToken, auth, client };
}

const passkeyProof = async (m: Member, _csrf: string, signer: SoftAuthenticator = m.auth) => {
  const options = await m.client.post('/portal/api/passkeys/assertion-options', { _csrf });
  return JSON.stringify(signer.assert(JSON.parse(options.html)));
};

// ---- what each gated route is asked, and how its change is seen ------------------------------

interface Case {
  path: string;
  fields: Record<string, string>;
  /** The change happened (or, for a step of a flow, the step answered). */
  done(res: Response, html: string): Promise<boolean>;
}

const NEW_URL = 'http://127.0.0.1:9/moved';

async function caseFor(route: ProofGatedRoute, m: Member): Promise<Case> {
  const scope = await server.scopeOf(m.tenantId);
  const endpoint = async () => (await listEndpoints(server.services, scope))[0]?.endpoint;
  const withEndpoint = async () => (await createEndpoint(server.services, scope, { url: 'http://127.0.0.1:9/hooks' })).endpoint.id;
  const redirectedTo = (res: Response, done: string) => res.status === 303 && (res.headers.get('location') ?? '').includes(`done=${done}`);
  const _csrf = await sessionCsrf(m.client);
  switch (route.path) {
    case '/portal/webhooks/endpoints':
      return { path: route.path, fields: { _csrf, url: 'http://127.0.0.1:9/new' }, done: async () => (await endpoint()) !== undefined };
    case '/portal/webhooks/endpoints/:endpointId/edit': {
      const id = await withEndpoint();
      return { path: `/portal/webhooks/endpoints/${id}/edit`, fields: { _csrf, version: '1', url: NEW_URL, confirm: 'yes' }, done: async () => (await endpoint())?.url === NEW_URL };
    }
    case '/portal/webhooks/endpoints/:endpointId/scheme': {
      const id = await withEndpoint();
      return { path: `/portal/webhooks/endpoints/${id}/scheme`, fields: { _csrf, version: '1', signatureScheme: 'both' }, done: async () => (await endpoint())?.signatureScheme === 'both' };
    }
    case '/portal/webhooks/endpoints/:endpointId/rotate': {
      const id = await withEndpoint();
      return { path: `/portal/webhooks/endpoints/${id}/rotate`, fields: { _csrf, version: '1', confirm: 'yes' }, done: async () => (await endpoint())?.version === 2 };
    }
    case '/portal/webhooks/endpoints/:endpointId/disable': {
      const id = await withEndpoint();
      return { path: `/portal/webhooks/endpoints/${id}/disable`, fields: { _csrf, version: '1', confirm: 'yes' }, done: async () => (await endpoint())?.active === false };
    }
    case '/portal/webhooks/endpoints/:endpointId/recover': {
      const id = await withEndpoint();
      return { path: `/portal/webhooks/endpoints/${id}/recover`, fields: { _csrf, hours: '720' }, done: async (res) => redirectedTo(res, 'recovered') };
    }
    case '/portal/webhooks/deliveries/:deliveryId/retry': {
      const deliveryId = (await sendTestWebhook(server.services, scope, await withEndpoint())).delivery.id;
      await failCycle(server.services, 'proof-gated-test', deliveryId);
      const cycle = async () => (await getDelivery(server.services, scope, deliveryId)).delivery.cycle;
      return { path: `/portal/webhooks/deliveries/${deliveryId}/retry`, fields: { _csrf }, done: async () => (await cycle()) === 2 };
    }
    case '/portal/account/passkeys/add':
      return { path: route.path, fields: { _csrf, name: 'Phone' }, done: async (res, html) => res.status === 200 && html.includes('create-passkey-page') };
    case '/portal/api/passkeys/registration-options':
      return { path: route.path, fields: { _csrf }, done: async (res, html) => res.status === 200 && typeof JSON.parse(html).challenge === 'string' };
    case '/portal/account/passkeys': {
      // The ceremony started while the proof was fresh; its answer arrives now.
      const options = await m.client.post('/portal/api/passkeys/registration-options', { _csrf });
      const phone = new SoftAuthenticator(ORIGIN, 'portal.merchant.example');
      const credential = JSON.stringify(phone.register(JSON.parse(options.html)));
      return { path: route.path, fields: { _csrf, name: 'Phone', credential }, done: async () => (await memberPasskeys(server.services, m.memberId)).length === 2 };
    }
    case '/portal/account/passkeys/:passkeyId/remove': {
      const [passkey] = await memberPasskeys(server.services, m.memberId);
      return { path: `/portal/account/passkeys/${passkey!.id}/remove`, fields: { _csrf }, done: async () => (await memberPasskeys(server.services, m.memberId)).length === 0 };
    }
    default:
      throw new Error(`no case for ${route.path}: add one`);
  }
}

const stale = () => clock.advance(REVERIFY_AFTER_MS + 1000);

/** The refusal of a stale step inside a flow (proof.tsx, staleStep): no proof is taken there. */
const STALE_STEP = 'Your last proof is too old';

/**
 * A stale session's answer: the proof page, or, for a step inside a flow, the stale-step refusal
 * whatever proof the form carries (never the proof page, never the step's own failure), nothing done.
 */
async function expectAsked(route: ProofGatedRoute, c: Case, res: Response, html: string): Promise<void> {
  expect(res.status, route.path).toBe(403);
  if (route.asks === 'page') {
    expect(html).toContain('data-testid="reverify-page"');
    // Both ways are offered: the member has a passkey, and the token is always there.
    expect(html).toContain('data-testid="reverify-passkey"');
    expect(html).toContain('data-testid="reverify"');
  } else {
    expect(html, route.path).toContain(STALE_STEP);
    expect(html).not.toContain('data-testid="reverify-page"');
  }
  expect(await c.done(res, html), route.path).toBe(false);
}

/** The refused proof did not refresh the session: the same form without a proof is asked again. */
async function expectStillStale(route: ProofGatedRoute, m: Member, c: Case): Promise<void> {
  const { credential: _credential, token: _token, ...unproven } = c.fields;
  const again = await m.client.post(c.path, route.path === '/portal/account/passkeys' ? c.fields : unproven);
  await expectAsked(route, c, again.res, again.html);
}

describe('proof-gated routes (PROOF_GATED_ROUTES)', () => {
  it('docs/operations.md lists exactly the routes of the table', () => {
    const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('### Proof-gated routes'));
    const rows = [...section.slice(0, section.indexOf('\n\n', section.indexOf('|'))).matchAll(/^\| `(POST)` \| `([^`]+)` \| ([^|]+) \|$/gm)];
    expect(rows.map((r) => ({ method: r[1], path: r[2], change: r[3]?.trim() }))).toEqual(PROOF_GATED_ROUTES.map(({ method, path, change }) => ({ method, path, change })));
  });

  for (const route of PROOF_GATED_ROUTES) {
    describe(`${route.method} ${route.path}`, () => {
      it('goes through while the proof is fresh', async () => {
        const m = await member();
        const c = await caseFor(route, m);
        const { res, html } = await m.client.post(c.path, c.fields);
        expect(await c.done(res, html), `${res.status} ${html.slice(0, 200)}`).toBe(true);
      });

      it('answers a stale proof with the proof page and changes nothing; a fresh proof given then lets it through', async () => {
        const m = await member();
        const c = await caseFor(route, m);
        stale();
        const asked = await m.client.post(c.path, c.fields);
        await expectAsked(route, c, asked.res, asked.html);
        if (route.asks === 'refuse') return;
        const proven = await m.client.post(c.path, { ...c.fields, credential: await passkeyProof(m, c.fields._csrf!) });
        expect(await c.done(proven.res, proven.html), `${proven.res.status}`).toBe(true);
      });

      it('refuses a proof made for another purpose', async () => {
        const m = await member();
        const c = await caseFor(route, m);
        // A challenge of this session issued for registering a passkey, answered as a re-verification.
        const registering = await m.client.post('/portal/api/passkeys/registration-options', { _csrf: c.fields._csrf! });
        const wrongPurpose = JSON.stringify(m.auth.assert(JSON.parse(registering.html)));
        stale();
        const refused = await m.client.post(c.path, { ...c.fields, credential: wrongPurpose });
        await expectAsked(route, c, refused.res, refused.html);
        if (route.asks === 'page') expect(refused.html).toContain('expired or was already used');
        await expectStillStale(route, m, c);
      });

      it('refuses the token and the passkey of another member', async () => {
        const m = await member();
        const other = await member(m.tenantId);
        const c = await caseFor(route, m);
        stale();
        const byToken = await m.client.post(c.path, { ...c.fields, token: other.token });
        await expectAsked(route, c, byToken.res, byToken.html);
        if (route.asks === 'page') expect(byToken.html).toContain('not your member token');
        const byPasskey = await m.client.post(c.path, { ...c.fields, credential: await passkeyProof(m, c.fields._csrf!, other.auth) });
        await expectAsked(route, c, byPasskey.res, byPasskey.html);
        if (route.asks === 'page') expect(byPasskey.html).toContain('could not be verified');
        await expectStillStale(route, m, c);
      });
    });
  }
});

describe('the routes are registered from the table', () => {
  const handler = (c: Context) => c.text('changed');
  const routesOf = () => portalApp(server.services).routes;
  const gateAt = (route: ProofGatedRoute) => (r: RouterRoute) => r.method === route.method && `/portal${r.path}` === route.path && r.handler.name === 'proofGate';

  it('registers every entry, with the method the table names, behind its gate', () => {
    const routes = routesOf();
    for (const route of PROOF_GATED_ROUTES) expect(routes.filter(gateAt(route)), `${route.method} ${route.path}`).toHaveLength(1);
    expect(routes.filter((r) => r.handler.name === 'proofGate')).toHaveLength(PROOF_GATED_ROUTES.length);
    expect(() => checkProofGates(routes)).not.toThrow();
  });

  it('refuses, at registration, a gated route whose path the table does not list', () => {
    expect(() => gated(new Hono<PortalEnv>(), server.services, '/webhooks/endpoints/:endpointId/unlisted', handler)).toThrow(
      '/webhooks/endpoints/:endpointId/unlisted is not in PROOF_GATED_ROUTES',
    );
  });

  it('refuses, at start, a gate on a method the table does not name, and an entry without its gate', () => {
    const routes = routesOf();
    const rotate = PROOF_GATED_ROUTES.find((r) => r.path.endsWith('/rotate'))!;
    const onGet = routes.map((r) => (gateAt(rotate)(r) ? { ...r, method: 'GET' } : r));
    expect(() => checkProofGates(onGet)).toThrow(`GET ${rotate.path} is gated but not in the table`);
    expect(() => checkProofGates(onGet)).toThrow(`POST ${rotate.path} is not registered behind its gate`);
    const ungated = routes.filter((r) => !gateAt(rotate)(r));
    expect(() => checkProofGates(ungated)).toThrow(`POST ${rotate.path} is not registered behind its gate`);
  });
});

describe('the proof page', () => {
  it('takes an empty token field for no proof, never a failure; wrong tokens are limited per member', async () => {
    const m = await member();
    const c = await caseFor(PROOF_GATED_ROUTES.find((r) => r.path.endsWith('/rotate'))!, m);
    stale();
    for (let i = 0; i < FAILURE_LIMITS.member * 2; i++) {
      const empty = await m.client.post(c.path, { ...c.fields, token: '  ' });
      expect(empty.res.status).toBe(403);
      expect(empty.html).toContain('Enter your member token');
    }
    for (let i = 0; i < FAILURE_LIMITS.member; i++) expect((await m.client.post(c.path, { ...c.fields, token: 'mt_wrong' })).res.status).toBe(403);
    const limited = await m.client.post(c.path, { ...c.fields, token: m.token });
    expect(limited.res.status).toBe(429);
    expect(await c.done(limited.res, limited.html)).toBe(false);
    // The limit is the member's: a colleague re-verifies with their own token and rotates.
    const colleague = await member(m.tenantId);
    stale();
    const proven = await colleague.client.post(c.path, { ...c.fields, _csrf: await sessionCsrf(colleague.client), token: colleague.token });
    expect(proven.res.status).toBe(200);
    expect(await c.done(proven.res, proven.html)).toBe(true);
  });
});

describe('what ends a session', () => {
  it('revoking a passkey ends the sessions it started; the token’s session stays', async () => {
    const m = await member();
    const byPasskey = browser();
    expect((await signInWithPasskey(byPasskey, m.auth)).status).toBe(303);
    expect((await byPasskey.get('/portal/webhooks')).res.status).toBe(200);
    const [passkey] = await memberPasskeys(server.services, m.memberId);
    await revokeMemberPasskeys(server.services, { tenantId: m.tenantId, memberId: m.memberId, passkeyId: passkey!.id });
    const after = await byPasskey.get('/portal/webhooks');
    expect(after.res.status).toBe(303);
    expect(after.res.headers.get('location')).toBe('/portal/sign-in?ended=1');
    expect((await m.client.get('/portal/webhooks')).res.status).toBe(200);
  });

  it('removing a passkey in the portal ends its sessions, the one that removed it included', async () => {
    const m = await member();
    const byPasskey = browser();
    expect((await signInWithPasskey(byPasskey, m.auth)).status).toBe(303);
    const elsewhere = browser();
    expect((await signInWithPasskey(elsewhere, m.auth)).status).toBe(303);
    const [passkey] = await memberPasskeys(server.services, m.memberId);
    const removed = await byPasskey.post(`/portal/account/passkeys/${passkey!.id}/remove`, { _csrf: await sessionCsrf(byPasskey) });
    expect(removed.res.headers.get('location')).toBe('/portal/sign-in?passkey-removed=1');
    expect((await byPasskey.get('/portal/webhooks')).res.status).toBe(303);
    expect((await elsewhere.get('/portal/webhooks')).res.status).toBe(303);
  });

  it('deactivating a member ends all their sessions for good: reactivating does not revive them', async () => {
    const m = await member();
    const byPasskey = browser();
    expect((await signInWithPasskey(byPasskey, m.auth)).status).toBe(303);
    await setMemberActive(server.services, { tenantId: m.tenantId, memberId: m.memberId, active: false });
    await setMemberActive(server.services, { tenantId: m.tenantId, memberId: m.memberId, active: true });
    expect((await m.client.get('/portal/webhooks')).res.status).toBe(303);
    expect((await byPasskey.get('/portal/webhooks')).res.status).toBe(303);
    await signInWithToken(m.client, m.token);
    expect((await m.client.get('/portal/webhooks')).res.status).toBe(200);
  });

  it('admin member sessions end ends every session of the member, and no other member’s', async () => {
    const m = await member();
    const colleague = await member(m.tenantId);
    const byPasskey = browser();
    expect((await signInWithPasskey(byPasskey, m.auth)).status).toBe(303);
    await endMemberSessions(server.services, { tenantId: m.tenantId, memberId: m.memberId });
    expect((await m.client.get('/portal/webhooks')).res.status).toBe(303);
    expect((await byPasskey.get('/portal/webhooks')).res.status).toBe(303);
    expect((await colleague.client.get('/portal/webhooks')).res.status).toBe(200);
  });
});

describe('limits behind TRUST_PROXY', () => {
  it('1 000 anonymous failed sign-ins from one address leave another member’s passkey sign-in and token re-verification working', async () => {
    const victim = await member();
    const attacker = browser('203.0.113.66');
    let _csrf = csrfOf((await attacker.get('/portal/sign-in')).html);
    const statuses = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      // A forged answer for the victim's credential, with a challenge now and then (each failed page issues a new form token).
      if (i % 50 === 0) await attacker.post('/portal/sign-in/passkey/options', { _csrf });
      const forged = { id: victim.auth.id, rawId: victim.auth.id, type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' } };
      const { res, html } = await attacker.post('/portal/sign-in/passkey', { _csrf, credential: JSON.stringify(forged) });
      statuses.add(res.status);
      _csrf = csrfOf(html);
    }
    expect([...statuses].sort()).toEqual([401, 429]);
    // The attacker's address is limited; the victim's is not, and neither is the victim.
    expect((await signInWithPasskey(browser('203.0.113.66'), victim.auth)).status).toBe(429);
    expect((await signInWithPasskey(browser(), victim.auth)).status).toBe(303);
    stale();
    const scope = await server.scopeOf(victim.tenantId);
    const id = (await createEndpoint(server.services, scope, { url: 'http://127.0.0.1:9/hooks' })).endpoint.id;
    const _session = await sessionCsrf(victim.client);
    const rotated = await victim.client.post(`/portal/webhooks/endpoints/${id}/rotate`, { _csrf: _session, version: '1', confirm: 'yes', token: victim.token });
    expect(rotated.res.status).toBe(200);
    expect(rotated.html).toContain('data-testid="signing-secret"');
  });

  it('a forwarded address from an untrusted hop is not believed: with TRUST_PROXY=1 only the nearest entry counts', async () => {
    // The attacker prepends addresses of its own; the proxy appends the real one, which is what counts.
    const address = '203.0.113.77';
    const spoofing = (n: number) =>
      new PortalClient(ORIGIN, { fetch: (url, init) => app.request(url, init), headers: { 'x-forwarded-for': `10.9.9.${n}, ${address}` } });
    for (let i = 0; i < FAILURE_LIMITS.address; i++) {
      const c = spoofing(i);
      const _csrf = csrfOf((await c.get('/portal/sign-in')).html);
      await c.post('/portal/sign-in/passkey/options', { _csrf });
      await c.post('/portal/sign-in/passkey', { _csrf, credential: JSON.stringify({ id: 'unknown', type: 'public-key', response: {} }) });
    }
    const c = spoofing(99);
    const _csrf = csrfOf((await c.get('/portal/sign-in')).html);
    await c.post('/portal/sign-in/passkey/options', { _csrf });
    expect((await c.post('/portal/sign-in/passkey', { _csrf, credential: JSON.stringify({ id: 'unknown', type: 'public-key', response: {} }) })).res.status).toBe(429);
  });

  it('limits ceremony options per address', async () => {
    const c = browser('203.0.113.88');
    const _csrf = csrfOf((await c.get('/portal/sign-in')).html);
    for (let i = 0; i < OPTIONS_LIMIT.limit; i++) expect((await c.post('/portal/sign-in/passkey/options', { _csrf })).res.status).toBe(200);
    const limited = await c.post('/portal/sign-in/passkey/options', { _csrf });
    expect(limited.res.status).toBe(429);
    expect(Number(limited.res.headers.get('retry-after'))).toBeGreaterThan(0);
    const other = browser('203.0.113.89');
    const otherCsrf = csrfOf((await other.get('/portal/sign-in')).html);
    expect((await other.post('/portal/sign-in/passkey/options', { _csrf: otherCsrf })).res.status).toBe(200);
  });
});
