// The delivery watchdog: a look at the worker every WATCHDOG_MS, so that no lost wake-up or
// wedged connection can leave due deliveries waiting unseen.
// - While the worker cannot claim or record (its queue calls fail or hang), it resets what
//   those calls use, the queue's connections (PostgreSQL: its idle ones dropped), and has the
//   worker look again. The wake-ups' listener is not touched: it is not what stalled, and it
//   finds and replaces a dead connection of its own.
// - Otherwise, when no claim has succeeded for WATCHDOG_MS, it has the worker look: a missed
//   notification costs at most that long.
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { DeliveryQueue } from '../domain/store.ts';
import type { Timers } from '../timers.ts';
import type { DeliveryWorker } from './worker.ts';

export const WATCHDOG_MS = 5_000;

export interface Watchdog {
  start(): void;
  stop(): void;
}

export interface WatchdogDeps {
  worker: Pick<DeliveryWorker, 'stalled' | 'lastClaimAt' | 'wake'>;
  queue: Pick<DeliveryQueue, 'reset'>;
  clock: Clock;
  timers: Timers;
  log: Logger;
  everyMs?: number;
}

export function createWatchdog({ worker, queue, clock, timers, log, everyMs = WATCHDOG_MS }: WatchdogDeps): Watchdog {
  let timer: unknown = null;
  let running = false;

  function look(): void {
    const stalled = worker.stalled();
    if (stalled !== null) {
      log.warn({ stalled }, 'delivery watchdog: the worker cannot claim or record; resetting the queue connections');
      queue.reset?.();
      worker.wake();
      return;
    }
    const last = worker.lastClaimAt();
    if (last === null || clock.now() - last >= everyMs) worker.wake();
  }

  function later(): void {
    timer = timers.setTimeout(() => {
      timer = null;
      if (!running) return;
      look();
      later();
    }, everyMs);
  }

  return {
    start() {
      if (running) return;
      running = true;
      later();
    },
    stop() {
      running = false;
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
    },
  };
}
