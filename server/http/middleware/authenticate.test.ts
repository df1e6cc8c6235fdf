import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, createTenant, type CreatedTenant } from '../../domain/admin.ts';
import { authenticate } from './authenticate.ts';
import { appWith, openTestServices, problemSlug } from './testing.ts';

let services: Awaited<ReturnType<typeof openTestServices>>;
let tenant: CreatedTenant;
let viewerToken: string;

beforeAll(async () => {
  services = await openTestServices();
  tenant = await createTenant(services, { name: 'Acme' });
  viewerToken = (await createMember(services, { tenantId: tenant.tenantId, email: 'v@acme.test', role: 'viewer' })).memberToken;
});
afterAll(() => services.close());

const keyHeaders = () => ({ 'x-api-key': tenant.apiKey, 'x-api-hash': tenant.apiHash });

describe('authenticate', () => {
  it('sets the principal of a valid API key', async () => {
    const app = appWith(authenticate({ services, allowsMember: false, environmentQuery: false }));
    const res = await app.request('/op/1', { headers: keyHeaders() });
    expect(res.status).toBe(200);
    const { principal } = (await res.json()) as { principal: { kind: string; tenantId: string; environment: string } };
    expect(principal).toMatchObject({ kind: 'api_key', tenantId: tenant.tenantId, environment: 'test' });
  });

  it.each([
    ['no credentials', {}],
    ['a wrong hash', { 'x-api-key': 'k', 'x-api-hash': 'nope' }],
  ])('answers 401 unauthenticated to %s', async (_what, headers) => {
    const app = appWith(authenticate({ services, allowsMember: false, environmentQuery: false }));
    const res = await app.request('/op/1', { headers: headers as Record<string, string> });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await problemSlug(res)).toBe('unauthenticated');
  });

  it('accepts a member token only where the operation allows it', async () => {
    const headers = { authorization: `Bearer ${viewerToken}` };
    const members = appWith(authenticate({ services, allowsMember: true, environmentQuery: true }));
    const ok = await members.request('/op/1?environment=live', { headers });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { principal: unknown }).principal).toMatchObject({ kind: 'member', role: 'viewer', environment: 'live' });
    const keysOnly = appWith(authenticate({ services, allowsMember: false, environmentQuery: false }));
    expect((await keysOnly.request('/op/1', { headers })).status).toBe(401);
  });

  it('refuses a malformed Authorization header with 401', async () => {
    const app = appWith(authenticate({ services, allowsMember: true, environmentQuery: true }));
    const res = await app.request('/op/1', { headers: { authorization: 'Basic abc' } });
    expect(res.status).toBe(401);
  });

  it('answers 403 tenant-mismatch when a key names another environment', async () => {
    const app = appWith(authenticate({ services, allowsMember: true, environmentQuery: true }));
    const res = await app.request('/op/1?environment=live', { headers: keyHeaders() });
    expect(res.status).toBe(403);
    expect(await problemSlug(res)).toBe('tenant-mismatch');
    expect((await app.request('/op/1?environment=test', { headers: keyHeaders() })).status).toBe(200);
  });
});
