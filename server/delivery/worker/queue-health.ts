// How this worker's calls to the store's queue fare: whether it can claim and record
// deliveries right now. Readiness reports it (/readyz 503 "delivery-stalled" while it cannot),
// the operator's metrics show the time since the last successful claim, and the watchdog acts
// on it. Every queue call of the worker goes through `observe`.
import type { Clock } from '../../domain/clock.ts';
import type { DeliveryQueue } from '../../domain/store.ts';

/** A queue call still unanswered after this long counts as stalled (its deadline should have ended it sooner). */
export const STALLED_AFTER_MS = 5_000;

export interface QueueHealth {
  /** The queue whose claim, completeAndClaim, nextDueAt, release and pause calls are observed. */
  observe(queue: DeliveryQueue): DeliveryQueue;
  /** Why delivery cannot go on right now, or null while it works. */
  stalled(): string | null;
  /** When a claim last succeeded (null: never). */
  lastClaimAt(): number | null;
  /** Claims and recorded batches that succeeded, and how many deliveries they held (batching under load). */
  counts(): QueueCounts;
}

export interface QueueCounts {
  claims: number;
  claimed: number;
  batches: number;
  recorded: number;
}

type Observed = 'claim' | 'completeAndClaim' | 'nextDueAt' | 'release' | 'pause';

export function queueHealth(clock: Clock, stalledAfterMs = STALLED_AFTER_MS): QueueHealth {
  const pending = new Map<number, { what: Observed; since: number }>();
  let next = 0;
  let lastClaim: number | null = null;
  const counts: QueueCounts = { claims: 0, claimed: 0, batches: 0, recorded: 0 };
  /** The last call's failure, when no call has succeeded since. */
  let failing: { what: Observed; message: string; since: number } | null = null;

  async function track<T>(what: Observed, call: () => Promise<T>): Promise<T> {
    const id = next++;
    pending.set(id, { what, since: clock.now() });
    try {
      const value = await call();
      failing = null;
      if (what === 'claim' || what === 'completeAndClaim') lastClaim = clock.now();
      return value;
    } catch (err) {
      failing ??= { what, message: err instanceof Error ? err.message : String(err), since: clock.now() };
      throw err;
    } finally {
      pending.delete(id);
    }
  }

  return {
    observe: (queue) => ({
      stats: (now) => queue.stats(now),
      releaseOrphaned: () => queue.releaseOrphaned(),
      ...(queue.reset ? { reset: () => queue.reset?.() } : {}),
      claim: async (o) => {
        const claimed = await track('claim', () => queue.claim(o));
        counts.claims += 1;
        counts.claimed += claimed.length;
        return claimed;
      },
      completeAndClaim: async (owner, completions, claim) => {
        const r = await track('completeAndClaim', () => queue.completeAndClaim(owner, completions, claim));
        counts.batches += 1;
        counts.recorded += completions.length;
        if (claim !== null && r.claimError === null) {
          counts.claims += 1;
          counts.claimed += r.claimed.length;
        }
        return r;
      },
      nextDueAt: () => track('nextDueAt', () => queue.nextDueAt()),
      release: (owner, ids) => track('release', () => queue.release(owner, ids)),
      pause: (destination, until) => track('pause', () => queue.pause(destination, until)),
    }),
    stalled() {
      const now = clock.now();
      if (failing !== null) return `the delivery queue's ${failing.what} failed ${Math.round((now - failing.since) / 1000)} s ago and has not succeeded since (${failing.message.slice(0, 120)})`;
      for (const { what, since } of pending.values()) {
        if (now - since >= stalledAfterMs) return `the delivery queue's ${what} has waited ${Math.round((now - since) / 1000)} s for the store`;
      }
      return null;
    },
    lastClaimAt: () => lastClaim,
    counts: () => ({ ...counts }),
  };
}
