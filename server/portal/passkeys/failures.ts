// Failed proofs (a passkey that did not verify, a wrong token at re-verification) are counted
// per member and per address over a sliding window; past the limit the portal refuses to try
// again until the oldest failure leaves the window.
import type { Clock } from '../../domain/clock.ts';

export const FAILURE_WINDOW_MS = 15 * 60_000;
export const FAILURE_LIMITS = { member: 5, address: 20 } as const;

export type FailureKey = { kind: keyof typeof FAILURE_LIMITS; id: string };

export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly clock: Clock) {}

  /** Seconds until another try is allowed for every key, or 0 when all may try now. */
  retryAfter(keys: readonly FailureKey[]): number {
    const now = this.clock.now();
    let wait = 0;
    for (const key of keys) {
      const times = this.recent(key, now);
      const limit = FAILURE_LIMITS[key.kind];
      const oldest = times[times.length - limit];
      if (times.length >= limit && oldest !== undefined) wait = Math.max(wait, Math.ceil((oldest + FAILURE_WINDOW_MS - now) / 1000));
    }
    return wait;
  }

  fail(keys: readonly FailureKey[]): void {
    const now = this.clock.now();
    for (const key of keys) this.failures.set(name(key), [...this.recent(key, now), now]);
  }

  private recent(key: FailureKey, now: number): number[] {
    const times = (this.failures.get(name(key)) ?? []).filter((t) => t > now - FAILURE_WINDOW_MS);
    if (times.length === 0) this.failures.delete(name(key));
    return times;
  }
}

const name = (key: FailureKey): string => `${key.kind}:${key.id}`;
