// How long the pruner rests after a batch. An idle instance prunes at full speed (PRUNE_PAUSE
// between batches), so it catches up at night; a busy one gives the pruner at most
// PRUNE_BUSY_SHARE of the time (a batch of 40 ms rests 760 ms at 5 %), so a saturated API
// loses at most about that share of its throughput. Under a load that never ends the pruner
// falls behind, which retention_oldest_row_age_seconds shows, and catches up when it eases.
//
// Busy is read off the event loop while the pruner rests (its own batch is not counted): the
// server's requests and deliveries all run on it, on either store.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Event-loop utilisation at or above which the instance counts as busy: low enough that a
 * server waiting on PostgreSQL at saturation counts, high enough that a trickle does not. */
export const BUSY_UTILISATION = 0.2;

/** The instance's load, read between two points in time. */
export interface LoadProbe {
  mark(): unknown;
  /** 0..1: how busy the instance was since `mark`. */
  since(mark: unknown): number;
}

export const eventLoopProbe: LoadProbe = {
  mark: () => performance.eventLoopUtilization(),
  since: (mark) => performance.eventLoopUtilization(mark as EventLoopUtilization).utilization,
};

/** The rest owed after a batch of `batchMs` when the instance is busy, beyond the pause already taken. */
export function busyRest(batchMs: number, share: number, pausedMs: number): number {
  return Math.max(0, (batchMs * (1 - share)) / share - pausedMs);
}
