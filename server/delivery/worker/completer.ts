// The batch completer: records finished attempts in as few store calls as the load allows.
// Attempts finished while a write is running wait for the next one, and those finishing in the
// same turn of the event loop share one: under load every commit records many attempts, and an
// idle worker records one at once.
//
// While other attempts are still in flight, it waits up to COMPLETE_LINGER_MS for
// COMPLETE_LINGER_MIN finished attempts before it records them. Each record is a commit with a
// fixed cost (on SQLite about 100 µs of the event loop: BEGIN, COMMIT writing the touched
// pages, the log sync's dispatch) that a fast disk's quick sync would otherwise pay every 6 to 8
// attempts. Only the recording waits: the send slot is free as soon as the answer arrives, the
// lease covers the wait many times over, and an idle worker (nothing else in flight) or a
// stopping one records at once.
//
// A write that fails wrote nothing: what can still be recorded under its lease is tried again
// after a back-off; an attempt whose lease has ended is dropped (the delivery is sent again by
// whoever claims it next: at-least-once).
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.ts';
import type { Attempted } from './attempt.ts';
import type { Timers } from '../../timers.ts';
import { errorBackoff } from './timers.ts';

export const COMPLETE_LINGER_MIN = 64;
export const COMPLETE_LINGER_MS = 2;
/** Most attempts recorded in one write. */
export const COMPLETE_BATCH = 256;

export const LEASE_ENDED = 'lease expired before the attempt could be recorded; the delivery will be sent again';

export interface Completer {
  /** Queues a finished attempt for the next write. */
  record(done: Attempted): void;
  /** Resolves once everything queued is written (or dropped); lingering and back-off end at once. */
  idle(): Promise<void>;
  /** Drops what is still queued and stops retrying (shutdown, the store silent); returns how many it dropped. */
  abandon(): number;
}

export interface CompleterDeps<R extends { applied: readonly boolean[] }> {
  timers: Timers;
  clock: Clock;
  log: Logger;
  /** Whether other attempts will finish soon enough to share the next write. */
  lingering(): boolean;
  /** Records a batch in one store call; throws when nothing of it was written. */
  write(batch: readonly Attempted[]): Promise<R>;
  /** One attempt is done with: recorded (`ok`), or not (lease lost or ended, `message` says which). */
  settle(done: Attempted, ok: boolean, message?: string): void;
  /** After a write's attempts are settled. */
  written(r: R): Promise<void>;
}

export function createCompleter<R extends { applied: readonly boolean[] }>(deps: CompleterDeps<R>): Completer {
  const { timers, clock, log } = deps;
  let queued: Attempted[] = [];
  let writing: Promise<void> | null = null;
  let turnScheduled = false;
  let retryTimer: unknown = null;
  let lingerTimer: unknown = null;
  let abandoned = false;
  const backoff = errorBackoff();

  /** Attempts are queued and nothing else will write them: no write running, none scheduled this turn, no retry waiting. */
  function readyToWrite(): boolean {
    return writing === null && !turnScheduled && retryTimer === null && queued.length > 0;
  }

  /** Writes now, or lingers for more while others are in flight. */
  function schedule(): void {
    if (abandoned) return;
    if (!readyToWrite()) return;
    if (deps.lingering() && queued.length < COMPLETE_LINGER_MIN) {
      lingerTimer ??= timers.setTimeout(() => {
        lingerTimer = null;
        writeNextTurn();
      }, COMPLETE_LINGER_MS);
      return;
    }
    writeNextTurn();
  }

  function writeNextTurn(): void {
    if (lingerTimer !== null) {
      timers.clearTimeout(lingerTimer);
      lingerTimer = null;
    }
    if (!readyToWrite()) return;
    turnScheduled = true;
    // One turn of the event loop: attempts finishing in the same turn join this batch.
    timers.setImmediate(() => {
      turnScheduled = false;
      writing = write().finally(() => {
        writing = null;
        schedule();
      });
    });
  }

  /** The write failed: keep what its lease still covers, retry after a back-off. */
  function retryLater(batch: Attempted[], err: unknown): void {
    const now = clock.now();
    const keep = batch.filter((done) => done.completion.leaseExpiresAt > now);
    for (const done of batch) if (!keep.includes(done)) deps.settle(done, false, LEASE_ENDED);
    const retryInMs = backoff.next();
    log.error({ err: err instanceof Error ? err.message : String(err), attempts: batch.length, retryInMs }, 'attempts could not be recorded; retrying');
    queued = [...keep, ...queued];
    retryTimer = timers.setTimeout(() => {
      retryTimer = null;
      schedule();
    }, retryInMs);
  }

  async function write(): Promise<void> {
    const batch = queued.slice(0, COMPLETE_BATCH);
    queued = queued.slice(batch.length);
    let r: R;
    try {
      r = await deps.write(batch);
      backoff.reset();
    } catch (err) {
      retryLater(batch, err);
      return;
    }
    batch.forEach((done, i) => deps.settle(done, r.applied[i] === true));
    await deps.written(r);
  }

  return {
    record(done) {
      queued.push(done);
      schedule();
    },
    abandon() {
      abandoned = true;
      for (const t of [retryTimer, lingerTimer]) if (t !== null) timers.clearTimeout(t);
      retryTimer = lingerTimer = null;
      const dropped = queued;
      queued = [];
      for (const done of dropped) deps.settle(done, false, LEASE_ENDED);
      return dropped.length;
    },
    async idle() {
      while (!abandoned && (queued.length > 0 || writing !== null || turnScheduled)) {
        // Waiting for everything: record what lingers now.
        if (lingerTimer !== null) writeNextTurn();
        if (retryTimer !== null) {
          // Stopping: try the failed batch again now rather than after the back-off.
          timers.clearTimeout(retryTimer);
          retryTimer = null;
          schedule();
        }
        if (writing !== null) await writing;
        else await new Promise<void>((resolve) => timers.setImmediate(resolve));
      }
    },
  };
}
