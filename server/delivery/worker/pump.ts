// The pump: the loop that claims while there is room and due deliveries. While the worker holds
// leases, the completer has it go on after each batch it records (which frees leases), so
// nothing else needs to be watched; once it holds none, it sleeps until the next delivery is
// due (at most MAX_IDLE_MS). A wake-up (the store's onDeliveriesReady, a freed slow slot)
// looks at once; a store error backs off.
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.ts';
import type { ClaimRound } from './claims.ts';
import type { Timers } from '../../timers.ts';
import { MAX_IDLE_MS, errorBackoff } from './timers.ts';

/** Sleep when due deliveries exist but none can be claimed (destination at its limit, leased elsewhere). */
export const BLOCKED_RECHECK_MS = 1_000;

export interface Pump {
  start(): void;
  /** Looks at the queue now (again after the current look, if one is running). */
  request(): void;
  running(): boolean;
  /** Stops looking; resolves once a claim in progress has registered what it leased. */
  stop(): Promise<void>;
}

export interface PumpDeps {
  timers: Timers;
  clock: Clock;
  log: Logger;
  claim(): Promise<ClaimRound>;
  /** Whether the worker holds any lease (the completer then has the pump go on). */
  holding(): boolean;
  nextDueAt(): Promise<number | null>;
}

export function createPump({ timers, clock, log, claim, holding, nextDueAt }: PumpDeps): Pump {
  let running = false;
  let sleepHandle: unknown = null;
  let pumping: Promise<void> | null = null;
  let again = false;
  const backoff = errorBackoff();

  function clearSleep(): void {
    if (sleepHandle !== null) {
      timers.clearTimeout(sleepHandle);
      sleepHandle = null;
    }
  }

  function sleep(ms: number): void {
    clearSleep();
    if (!running) return;
    sleepHandle = timers.setTimeout(
      () => {
        sleepHandle = null;
        request();
      },
      Math.max(0, Math.min(ms, MAX_IDLE_MS)),
    );
  }

  function request(): void {
    if (!running) return;
    if (pumping !== null) {
      again = true;
      return;
    }
    pumping = pump().finally(() => {
      pumping = null;
    });
  }

  async function pump(): Promise<void> {
    do {
      again = false;
      clearSleep();
      try {
        await fill();
        backoff.reset();
      } catch (err) {
        const retryInMs = backoff.next();
        log.error({ err: err instanceof Error ? err.message : String(err), retryInMs }, 'delivery queue unavailable');
        sleep(retryInMs);
        return;
      }
    } while (again && running);
  }

  /** Claims while there is room and due deliveries; then returns, or sleeps when nothing is held. */
  async function fill(): Promise<void> {
    for (;;) {
      if (!running) return;
      const { claimed, limit, at } = await claim();
      if (limit === 0) return; // full: the completer pumps again
      if (claimed === limit) continue; // maybe more are due
      if (holding()) return; // the completer pumps again when leases free up
      const due = await nextDueAt();
      if (!running || holding()) return;
      const now = clock.now();
      if (due === null) return sleep(MAX_IDLE_MS);
      if (due > now) return sleep(due - now);
      // Due now but not claimed: if it became due after the claim looked, look again at once;
      // otherwise its destination is at its limit or another worker's lease on it is live.
      if (due > at) continue;
      return sleep(BLOCKED_RECHECK_MS);
    }
  }

  return {
    start() {
      running = true;
      request();
    },
    request,
    running: () => running,
    async stop() {
      running = false;
      clearSleep();
      while (pumping !== null) await pumping;
    },
  };
}
