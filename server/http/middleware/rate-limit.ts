// The per-credential limit, taken after authentication so each key or member has its own
// bucket; 429 with Retry-After when it is empty.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';
import type { RateLimiter } from '../rate-limit.ts';

export function rateLimit(limiter: RateLimiter): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const principal = c.get('principal');
    limiter.take(principal.kind === 'api_key' ? principal.keyId : principal.memberId);
    await next();
  };
}
