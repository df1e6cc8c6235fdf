// The worker's side of endpoint health (issue 69): hands recorded attempts to the domain's
// bookkeeping (domain/endpoints/health.ts) in batches, off the send path, and keeps a destination
// that answered 410 Gone from being sent its prefetched deliveries while the disable commits.
//
// A healthy endpoint pays nothing: a success is handed on only when the endpoint was in a run of
// failures when its delivery was claimed (Lease.endpointFailures) or failed here since. Failures
// always are (a failing endpoint is rare, and its attempts are spaced by the schedule).
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.ts';
import type { EndpointAttempt, HealthOutcome } from '../../domain/endpoints/health.ts';
import type { AttemptResult } from '../../domain/store.ts';
import type { Timers } from '../../timers.ts';
import type { Lease } from './lease.ts';

export interface EndpointHealth {
  /** An attempt answered (before it is recorded): a 410 holds its destination back at once. */
  answered(lease: Lease, result: AttemptResult): void;
  /** An attempt recorded under its lease. */
  observe(lease: Lease, result: AttemptResult): void;
  /** Whether this destination answered 410 within the last `holdMs`: its prefetched deliveries are not sent. */
  gone(dest: string): boolean;
  /** Resolves once everything observed is written (or failed and logged). */
  idle(): Promise<void>;
}

export interface EndpointHealthDeps {
  timers: Timers;
  clock: Clock;
  log: Logger;
  /** How long a 410 holds its destination's prefetched deliveries back: their lease, after which they cannot be sent. */
  holdMs: number;
  record(attempts: readonly EndpointAttempt[]): Promise<HealthOutcome>;
  /** Told of what each write did (metrics). */
  onOutcome?(o: HealthOutcome): void;
  /** Endpoints and destinations remembered (default ENDPOINT_HEALTH_MEMORY). */
  memory?: number;
}

/**
 * Endpoints (and 410 destinations) remembered; forgotten all at once when one more would pass
 * this, as pace.ts does: deleted and disabled endpoints never come back to be removed. Forgetting
 * a suspect costs little: the store counts its failures, and the next claim carries the count.
 */
export const ENDPOINT_HEALTH_MEMORY = 10_000;

export function createEndpointHealth(deps: EndpointHealthDeps): EndpointHealth {
  let queued: EndpointAttempt[] = [];
  let writing: Promise<void> | null = null;
  const memory = deps.memory ?? ENDPOINT_HEALTH_MEMORY;
  /** Endpoints that failed here and have not succeeded since. */
  const suspects = new Set<string>();
  /** Destinations that answered 410, until when they are held. */
  const goneUntil = new Map<string, number>();
  const roomFor = (known: Set<string> | Map<string, number>, key: string): void => {
    if (!known.has(key) && known.size >= memory) known.clear();
  };

  async function flush(): Promise<void> {
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      try {
        const outcome = await deps.record(batch);
        for (const d of outcome.disabled) deps.log.warn({ endpointId: d.endpointId, reason: d.reason }, 'webhook endpoint disabled');
        deps.onOutcome?.(outcome);
      } catch (err) {
        // Nothing was written: the next failure counts again; a 410 answers again on its next attempt.
        deps.log.error({ err: err instanceof Error ? err.message : String(err), attempts: batch.length }, 'endpoint health could not be recorded');
        for (const a of batch) if (a.statusCode === 410) goneUntil.delete(`e:${a.endpointId}`);
      }
    }
  }

  function schedule(): void {
    if (writing !== null) return;
    writing = new Promise<void>((resolve) => deps.timers.setImmediate(resolve))
      .then(flush)
      .finally(() => {
        writing = null;
        if (queued.length > 0) schedule();
      });
  }

  return {
    answered(lease, result) {
      if (lease.delivery.endpointId === null || result.attempt.statusCode !== 410) return;
      roomFor(goneUntil, lease.dest);
      goneUntil.set(lease.dest, deps.clock.now() + deps.holdMs);
    },
    observe(lease, result) {
      const { endpointId, endpointVersion, environmentId } = lease.delivery;
      if (endpointId === null || endpointVersion === null) return;
      const { success, statusCode, startedAt } = result.attempt;
      if (success && (lease.endpointFailures ?? 0) === 0 && !suspects.has(endpointId)) return;
      if (success) suspects.delete(endpointId);
      else {
        roomFor(suspects, endpointId);
        suspects.add(endpointId);
      }
      queued.push({ environmentId, endpointId, endpointVersion, at: startedAt, success, statusCode });
      schedule();
    },
    gone(dest) {
      const until = goneUntil.get(dest);
      if (until === undefined) return false;
      if (until > deps.clock.now()) return true;
      goneUntil.delete(dest);
      return false;
    },
    async idle() {
      while (writing !== null) await writing;
    },
  };
}
