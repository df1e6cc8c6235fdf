import { describe, expect, it } from 'vitest';
import { testEnvironmentOnly } from './sandbox.ts';
import { appWith, asPrincipal, problemSlug } from './testing.ts';

describe('testEnvironmentOnly', () => {
  it('passes test credentials and answers 403 live-key-not-allowed to live ones', async () => {
    expect((await appWith(asPrincipal({ environment: 'test' }), testEnvironmentOnly()).request('/op/1')).status).toBe(200);
    const live = await appWith(asPrincipal({ environment: 'live' }), testEnvironmentOnly()).request('/op/1');
    expect(live.status).toBe(403);
    expect(await problemSlug(live)).toBe('live-key-not-allowed');
  });
});
