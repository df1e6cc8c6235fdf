// Destination health as this worker saw it: the last outcome per destination. A destination
// that failed here last, or that never answered here and whose delivery is a retry, is
// suspect: the dispatcher sends to it one attempt at a time from the slow budget, and sends to
// destinations that answered first.
import type { Lease } from './lease.ts';

/** Destinations whose last outcome is remembered; the memory is emptied when it would grow past this. */
export const OUTCOME_MEMORY_SIZE = 10_000;

export interface DestinationHealth {
  remember(dest: string, success: boolean): void;
  /** Its last attempt here was answered with a 2xx. */
  answered(dest: string): boolean;
  /** The destination of `next` failed here last, or (no outcome here) `next` is a retry. */
  suspect(next: Lease): boolean;
}

export function destinationHealth(size = OUTCOME_MEMORY_SIZE): DestinationHealth {
  /** true: answered 2xx; false: failed. */
  const outcomes = new Map<string, boolean>();
  return {
    remember(dest, success) {
      if (outcomes.size >= size && !outcomes.has(dest)) outcomes.clear();
      outcomes.set(dest, success);
    },
    answered: (dest) => outcomes.get(dest) === true,
    suspect(next) {
      const last = outcomes.get(next.dest);
      return last === undefined ? next.delivery.attemptCount > 0 : !last;
    },
  };
}
