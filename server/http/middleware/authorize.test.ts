import { describe, expect, it } from 'vitest';
import { authorize } from './authorize.ts';
import { appWith, asPrincipal, problemSlug } from './testing.ts';

describe('authorize', () => {
  it('lets a key with the permission through and answers 403 permission-denied without it', async () => {
    const need = { permission: 'payouts' as const, memberRoles: null };
    expect((await appWith(asPrincipal({ permissions: new Set(['payouts']) } as never), authorize(need)).request('/op/1')).status).toBe(200);
    const denied = await appWith(asPrincipal({ permissions: new Set(['refunds']) } as never), authorize(need)).request('/op/1');
    expect(denied.status).toBe(403);
    expect(await problemSlug(denied)).toBe('permission-denied');
  });

  it('checks a member’s role against the operation’s member roles', async () => {
    const need = { permission: 'webhooks_manage' as const, memberRoles: ['administrator', 'developer'] };
    const member = (role: string) => asPrincipal({ kind: 'member', memberId: 'mem_1', role } as never);
    expect((await appWith(member('developer'), authorize(need)).request('/op/1')).status).toBe(200);
    expect((await appWith(member('viewer'), authorize(need)).request('/op/1')).status).toBe(403);
  });
});
