// Per-credential token bucket. In memory and per instance: with several instances behind a
// load balancer each applies its own limit (see docs/operations.md, "Several instances on PostgreSQL").
import { AppError } from '../domain/errors.ts';
import type { Clock } from '../domain/clock.ts';

export interface RateLimitOptions {
  /** Sustained requests per second per credential; 0 turns the limiter off. */
  perSecond: number;
  /** Bucket size (burst); default twice the rate. */
  burst?: number;
  clock: Clock;
  /** Buckets kept at most (least recently used are dropped). */
  maxKeys?: number;
}

export interface RateLimiter {
  /** Takes a token for `key` or throws 429 rate-limited with the seconds to wait. */
  take(key: string): void;
}

export function createRateLimiter(opts: RateLimitOptions): RateLimiter {
  if (!Number.isFinite(opts.perSecond) || opts.perSecond < 0) throw new RangeError('perSecond must be ≥ 0');
  const burst = opts.burst ?? opts.perSecond * 2;
  const maxKeys = opts.maxKeys ?? 10_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  if (opts.perSecond === 0) return { take: () => undefined };
  return {
    take(key) {
      const now = opts.clock.now();
      const b = buckets.get(key) ?? { tokens: burst, at: now };
      buckets.delete(key);
      b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * opts.perSecond);
      b.at = now;
      if (b.tokens < 1) {
        buckets.set(key, b);
        const wait = Math.max(1, Math.ceil((1 - b.tokens) / opts.perSecond));
        throw new AppError('rate-limited', `More than ${opts.perSecond} requests per second for these credentials; retry in ${wait} s.`, {
          retryAfter: wait,
        });
      }
      b.tokens -= 1;
      buckets.set(key, b);
      if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value as string);
    },
  };
}
