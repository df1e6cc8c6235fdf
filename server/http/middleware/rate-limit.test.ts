import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../rate-limit.ts';
import { rateLimit } from './rate-limit.ts';
import { appWith, asPrincipal, problemSlug } from './testing.ts';

describe('rateLimit', () => {
  it('answers 429 with Retry-After once the credential’s bucket is empty, per credential', async () => {
    const now = 1_000_000;
    const limiter = createRateLimiter({ perSecond: 1, burst: 2, clock: { now: () => now } });
    const first = appWith(asPrincipal({ keyId: 'key_a' } as never), rateLimit(limiter));
    expect((await first.request('/op/1')).status).toBe(200);
    expect((await first.request('/op/1')).status).toBe(200);
    const limited = await first.request('/op/1');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await problemSlug(limited)).toBe('rate-limited');
    // Another key has its own bucket.
    const other = appWith(asPrincipal({ keyId: 'key_b' } as never), rateLimit(limiter));
    expect((await other.request('/op/1')).status).toBe(200);
  });
});
