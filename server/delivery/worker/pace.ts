// When each destination may be sent to next, in this worker: a receiver's pause (Retry-After on
// a 429 or 503) and the endpoint's rate cap (maxPerSecond). The dispatcher asks `openAt` before
// a send and tells `took` after it; it never waits, the worker arms one timer for the earliest
// open time (worker.ts). Across instances both hold through the store: a pause is written to
// destination_pauses before the answer's lease is let go, and a capped destination's next slot
// before its leases are given back, so whoever claims the destination next waits as well; while
// this worker holds a lease on a destination no other claims it (claims are exclusive).
//
// The cap is a GCRA (generic cell rate algorithm): one send per 1000 / maxPerSecond ms, on a
// theoretical schedule `slot` that a late timer may catch up on by one interval, so the rate
// holds under timer jitter and no second ever sees more than maxPerSecond + 1 sends.

export interface Pace {
  /** When `dest` may send next (at most `now`: now). */
  openAt(dest: string, now: number): number;
  /** `dest` sends nothing before `until` (a later pause it has already stays). */
  pause(dest: string, until: number): void;
  /** A send to `dest` started at `now`, under its cap (undefined: none). */
  took(dest: string, now: number, maxPerSecond: number | undefined): void;
}

/** Destinations remembered; emptied when it would grow past this (as endpoint-limit.ts). */
export const PACE_MEMORY_SIZE = 10_000;

export function createPace(memory = PACE_MEMORY_SIZE): Pace {
  /** Per destination: nothing is sent before this. */
  const next = new Map<string, number>();
  const hold = (dest: string, until: number): void => {
    if (!next.has(dest) && next.size >= memory) next.clear();
    next.set(dest, Math.max(next.get(dest) ?? -Infinity, until));
  };
  return {
    openAt: (dest, now) => Math.max(now, next.get(dest) ?? now),
    pause: hold,
    took(dest, now, maxPerSecond) {
      if (maxPerSecond === undefined) return;
      const interval = 1000 / maxPerSecond;
      // Catch up at most one interval: a timer that fired late does not lower the rate.
      const slot = next.get(dest);
      hold(dest, (slot === undefined ? now : Math.max(slot, now - interval)) + interval);
    },
  };
}
