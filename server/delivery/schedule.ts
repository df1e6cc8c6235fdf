// The retry schedule of PRODUCT.md: one attempt at once, then retries after about 5 s, 30 s,
// 2 min, 10 min, 30 min, 1 h, 2 h, 4 h and 8 h (ten attempts, about 16 h), each ±20 % jitter.
import { MAX_DELIVERY_ATTEMPTS } from '../../generated/vocabulary.ts';

/** Attempts per cycle: the contract's `maxAttempts`. */
export const MAX_ATTEMPTS = MAX_DELIVERY_ATTEMPTS;
export const ATTEMPT_TIMEOUT_MS = 10_000;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delay before attempt n+1, after attempt n (1-based) failed. */
export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR];
export const JITTER = 0.2;

export interface RetryPolicy {
  /** Factor applied to every delay (WEBHOOK_RETRY_SCALE). */
  scale: number;
  /** Random number in [0, 1) for the jitter; injectable for exact tests. */
  random?: () => number;
}

/**
 * When the next attempt is due after attempt `attempt` (1-based) failed at `now`,
 * or null when that was the last attempt of the cycle.
 */
export function nextAttemptAt(attempt: number, now: number, policy: RetryPolicy): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) throw new RangeError(`attempt must be 1..${MAX_ATTEMPTS}, not ${attempt}`);
  const factor = 1 - JITTER + 2 * JITTER * (policy.random ?? Math.random)();
  return now + Math.max(0, Math.round(base * policy.scale * factor));
}
