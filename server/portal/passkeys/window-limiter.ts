// Sliding-window counters of events per key: past a key's limit within its window the portal
// refuses until the oldest event leaves the window. It counts what its owner records, under two
// names in the portal (passkeys/flows.ts):
// - `failures`: failed proofs. Anonymous passkey sign-ins per client address (an IPv6
//   address's /64; TRUST_PROXY says how it is read), the proofs of a signed-in member (a passkey
//   or the member token at re-verification, a new passkey) per member, so no anonymous client
//   can lock a member out.
// - `options`: every ceremony options request (a challenge each) per address, successful or not:
//   a rate, not a count of failures.
// Keys whose window has passed are forgotten, so the map holds only the keys of the last window.
import type { Clock } from '../../domain/clock.ts';

export const FAILURE_WINDOW_MS = 15 * 60_000;
export const FAILURE_LIMITS = { member: 5, address: 20 } as const;
/** Ceremony options (a challenge each) one address may ask for per minute. */
export const OPTIONS_LIMIT = { limit: 30, windowMs: 60_000 } as const;

export type FailureKey = { kind: 'member' | 'address'; id: string };
type Limits = Readonly<Record<string, { limit: number; windowMs: number }>>;

const FAILURES: Limits = {
  member: { limit: FAILURE_LIMITS.member, windowMs: FAILURE_WINDOW_MS },
  address: { limit: FAILURE_LIMITS.address, windowMs: FAILURE_WINDOW_MS },
};

export class WindowLimiter {
  private readonly events = new Map<string, number[]>();
  private readonly longestWindowMs: number;
  private lastSweep: number;

  constructor(
    private readonly clock: Clock,
    private readonly limits: Limits = FAILURES,
  ) {
    this.longestWindowMs = Math.max(...Object.values(limits).map((l) => l.windowMs));
    this.lastSweep = clock.now();
  }

  /** Seconds until another try is allowed for every key, or 0 when all may try now. */
  retryAfter(keys: readonly { kind: string; id: string }[]): number {
    const now = this.clock.now();
    let wait = 0;
    for (const key of keys) {
      const { limit, windowMs } = this.limitOf(key.kind);
      const times = this.recent(key, now);
      const oldest = times[times.length - limit];
      if (times.length >= limit && oldest !== undefined) wait = Math.max(wait, Math.ceil((oldest + windowMs - now) / 1000));
    }
    return wait;
  }

  /** One event for each key (a failure, or an options request: whatever this limiter counts). */
  record(keys: readonly { kind: string; id: string }[]): void {
    const now = this.clock.now();
    this.sweep(now);
    for (const key of keys) this.events.set(name(key), [...this.recent(key, now), now]);
  }

  /** How many keys are remembered (the map never outgrows the keys of the last window). */
  get size(): number {
    return this.events.size;
  }

  private limitOf(kind: string): { limit: number; windowMs: number } {
    const l = this.limits[kind];
    if (!l) throw new Error(`no limit for ${kind}`);
    return l;
  }

  private recent(key: { kind: string; id: string }, now: number): number[] {
    const { windowMs } = this.limitOf(key.kind);
    const times = (this.events.get(name(key)) ?? []).filter((t) => t > now - windowMs);
    if (times.length === 0) this.events.delete(name(key));
    return times;
  }

  /** Forgets every key whose last event left its window; at most once per longest window, so it costs O(1) per event. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.longestWindowMs) return;
    this.lastSweep = now;
    for (const [key, times] of this.events) {
      const windowMs = this.limits[key.slice(0, key.indexOf(':'))]?.windowMs ?? this.longestWindowMs;
      if ((times[times.length - 1] ?? 0) <= now - windowMs) this.events.delete(key);
    }
  }
}

const name = (key: { kind: string; id: string }): string => `${key.kind}:${key.id}`;
