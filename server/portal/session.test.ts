// Whether the portal's cookies are the https ones (`__Host-`, Secure) over real HTTP on loopback:
// PORTAL_ORIGIN's scheme when it is set; else the request's own, or X-Forwarded-Proto when a
// proxy TRUST_PROXY trusts wrote it. A header from anyone else is whatever the client wrote.
import { afterAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE, SIGN_IN_COOKIE } from './session.ts';
import { PortalClient, startPortalTestServer, type PortalTestServer } from './testing.ts';

const servers: PortalTestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

async function serverWith(env: Record<string, string>): Promise<PortalTestServer> {
  const server = await startPortalTestServer({ env });
  servers.push(server);
  return server;
}

/** The cookies one signed-in browser was given (Set-Cookie lines of the sign-in form and of the sign-in). */
async function cookiesOf(server: PortalTestServer, headers: Record<string, string> = {}): Promise<string[]> {
  const t = await server.newTenant();
  const client = new PortalClient(server.portalUrl, { headers });
  const form = await client.get('/portal/sign-in');
  const { res } = await client.signIn(t.memberToken);
  expect(res.status).toBe(303);
  // The session works with the cookie it was given, whichever name that is.
  expect((await client.get('/portal/webhooks')).res.status).toBe(200);
  return [...form.res.headers.getSetCookie(), ...res.headers.getSetCookie()];
}

const HTTPS = { 'x-forwarded-proto': 'https' };

function expectHttpsCookies(lines: string[]): void {
  for (const name of [SIGN_IN_COOKIE, SESSION_COOKIE]) {
    const line = lines.find((l) => l.startsWith(`__Host-${name}=`));
    expect(line, name).toMatch(/; Path=\/;.*; Secure/);
  }
  expect(lines.filter((l) => !l.startsWith('__Host-'))).toEqual([]);
}

function expectPlainCookies(lines: string[]): void {
  for (const name of [SIGN_IN_COOKIE, SESSION_COOKIE]) {
    const line = lines.find((l) => l.startsWith(`${name}=`));
    expect(line, name).toMatch(/; Path=\/portal;/);
    expect(line, name).not.toMatch(/; Secure/);
  }
  expect(lines.filter((l) => l.startsWith('__Host-'))).toEqual([]);
}

describe('the https cookies', () => {
  it('ignore X-Forwarded-Proto without a trusted proxy (TRUST_PROXY off)', async () => {
    const server = await serverWith({});
    expectPlainCookies(await cookiesOf(server, HTTPS));
  });

  it('ignore X-Forwarded-Proto from a peer that is not one of the trusted proxies', async () => {
    const server = await serverWith({ TRUST_PROXY: '10.0.0.0/8' });
    expectPlainCookies(await cookiesOf(server, HTTPS));
  });

  it('honour X-Forwarded-Proto behind a trusted proxy, by hop count or by address', async () => {
    for (const TRUST_PROXY of ['1', '127.0.0.0/8,::1']) {
      const server = await serverWith({ TRUST_PROXY });
      expectHttpsCookies(await cookiesOf(server, HTTPS));
      expectPlainCookies(await cookiesOf(server));
    }
  });

  it('read the proto of Forwarded, not X-Forwarded-Proto, when that is the header the proxies write', async () => {
    const server = await serverWith({ TRUST_PROXY: '1', TRUST_PROXY_HEADER: 'forwarded' });
    expectHttpsCookies(await cookiesOf(server, { forwarded: 'for=203.0.113.9;proto=https' }));
    expectPlainCookies(await cookiesOf(server, HTTPS));
  });

  it('follow PORTAL_ORIGIN’s scheme when it is set, whatever the request or a trusted proxy says', async () => {
    const https = await serverWith({ PORTAL_ORIGIN: 'https://portal.merchant.example', TRUST_PROXY: '1' });
    expectHttpsCookies(await cookiesOf(https));
    expectHttpsCookies(await cookiesOf(https, { 'x-forwarded-proto': 'http' }));
    const http = await serverWith({ PORTAL_ORIGIN: 'http://localhost:8080', TRUST_PROXY: '1' });
    expectPlainCookies(await cookiesOf(http, HTTPS));
  });
});
