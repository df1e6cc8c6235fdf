import { describe, expect, it } from 'vitest';
import { tenantCheck } from './tenant.ts';
import { appWith, asPrincipal, problemSlug } from './testing.ts';

describe('tenantCheck', () => {
  const app = appWith(asPrincipal({ tenantId: 'ten_mine' }), tenantCheck());

  it('passes without the header and with the credentials’ own tenant', async () => {
    expect((await app.request('/op/1')).status).toBe(200);
    expect((await app.request('/op/1', { headers: { 'x-tenant-id': 'ten_mine' } })).status).toBe(200);
  });

  it('answers 403 tenant-mismatch to another tenant', async () => {
    const res = await app.request('/op/1', { headers: { 'x-tenant-id': 'ten_other' } });
    expect(res.status).toBe(403);
    expect(await problemSlug(res)).toBe('tenant-mismatch');
  });
});
