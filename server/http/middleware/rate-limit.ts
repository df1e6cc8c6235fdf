// The per-credential limit, taken after authentication so each key or member has its own
// bucket; 429 with Retry-After when it is empty.
import type { RateLimiter } from '../rate-limit.ts';
import { asMiddleware, type Step } from './step.ts';

export const rateLimit = (limiter: RateLimiter) => asMiddleware(rateLimitStep(limiter));

export function rateLimitStep(limiter: RateLimiter): Step {
  return (c) => {
    const principal = c.get('principal');
    limiter.take(principal.kind === 'api_key' ? principal.keyId : principal.memberId);
  };
}
