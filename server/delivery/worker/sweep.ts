// The slow sweep: once the shared budget is full, attempts launched before now that are still
// open after `slowAfterMs` move to the slow budget, so hanging destinations give their shared
// slots up to destinations that answer. A waiting socket is cheap; a shared slot is not.
import type { Dispatcher, Slot } from './dispatcher.ts';
import type { Timers } from '../../timers.ts';

export interface Sweep {
  /** Moves what is open now once slowAfterMs has passed (no-op if armed already or the slow budget is full). */
  arm(): void;
  cancel(): void;
}

export function createSweep(deps: {
  timers: Timers;
  slowAfterMs: number;
  dispatcher: Pick<Dispatcher<Slot>, 'moveToSlow' | 'slowFull' | 'lastSeq'>;
  /** After a move: the moved attempts' leases no longer count against claims. */
  moved(): void;
}): Sweep {
  const { timers, dispatcher } = deps;
  let handle: unknown = null;
  return {
    arm() {
      if (handle !== null || dispatcher.slowFull()) return;
      const upTo = dispatcher.lastSeq();
      handle = timers.setTimeout(() => {
        handle = null;
        dispatcher.moveToSlow(upTo);
        deps.moved();
      }, deps.slowAfterMs);
    },
    cancel() {
      if (handle !== null) timers.clearTimeout(handle);
      handle = null;
    },
  };
}
