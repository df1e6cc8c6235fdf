// The worker's side of pacing (pace.ts decides when each destination may send next): the one
// timer that dispatches again when the earliest held-back destination opens, and the store's
// copy of a pause, written before the leases it holds back are let go, so that whoever claims
// the destination next waits as this worker would.
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.ts';
import type { DeliveryQueue } from '../../domain/store.ts';
import type { Timers } from '../../timers.ts';
import type { GiveBack, Lease } from './lease.ts';
import type { Pace } from './pace.ts';

export interface PacingDeps {
  pace: Pace;
  timers: Timers;
  clock: Clock;
  log: Logger;
  queue: Pick<DeliveryQueue, 'pause'>;
  giveBack: GiveBack;
  /** Dispatches again (the dispatcher, made after this part). */
  dispatch(): void;
}

export interface Pacing {
  /** Dispatches again at `at`, unless an earlier wake-up is armed already. */
  wakeAt(at: number): void;
  /** Writes `dest`'s pause; a failure is logged, not thrown: other instances then only miss the pause. */
  pauseInStore(dest: string, until: number): Promise<void>;
  /** Gives the leases back, the pauses of their destinations still held back written first. */
  giveBack(leases: readonly Lease[]): Promise<void>;
  /** Disarms the wake-up. */
  stop(): void;
}

export function createPacing(deps: PacingDeps): Pacing {
  const { pace, timers, clock, log } = deps;
  let armed: { at: number; handle: unknown } | null = null;

  async function pauseInStore(dest: string, until: number): Promise<void> {
    try {
      await deps.queue.pause(dest, until);
    } catch (err) {
      log.error({ destination: dest, err: err instanceof Error ? err.message : String(err) }, "could not record the destination's pause; other instances may send to it before it ends");
    }
  }

  return {
    wakeAt(at) {
      if (armed !== null && armed.at <= at) return;
      if (armed !== null) timers.clearTimeout(armed.handle);
      const handle = timers.setTimeout(() => {
        armed = null;
        deps.dispatch();
      }, Math.max(0, at - clock.now()));
      armed = { at, handle };
    },
    pauseInStore,
    async giveBack(leases) {
      const now = clock.now();
      const held = new Set(leases.map((l) => l.dest).filter((d) => pace.openAt(d, now) > now));
      await Promise.all([...held].map((d) => pauseInStore(d, pace.openAt(d, now))));
      await deps.giveBack(leases.map((l) => l.delivery.id));
    },
    stop() {
      if (armed !== null) timers.clearTimeout(armed.handle);
      armed = null;
    },
  };
}
