// A unit's life outside a batch (see ../group-commit.ts): admitted or refused at once, queued,
// taken by a batch, answered early by its whole deadline or its signal, queued again after a
// deadlock. The only holder of the queue: the loops learn that a unit was queued through
// `queued()`, and batches take and give back units through the methods here.
import type pg from 'pg';
import type { Logger } from 'pino';
import { isRetryable } from '../db.ts';
import { DeadlineExceeded } from '../deadlines.ts';
import { CallCancelled, OVERLOADED, OutcomeUnknown } from '../../../domain/store-errors.ts';
import type { Timers } from '../../../timers.ts';
import type { ObservedUnit, UnitObserver } from '../../../domain/unit-observer.ts';

/** What a unit of work left for after the commit. */
export interface Outcome<T> {
  value: T;
  /** It queued deliveries: the batch notifies the other instances on commit. */
  notify: boolean;
  /** Environments whose transactions it changed: the batch tells every instance on commit. */
  touched: ReadonlySet<string> | null;
  /** Runs its afterCommit callbacks and wakes this instance's listeners. */
  committed(): void;
}

/** Runs one unit on the batch's connection; settles only once all its statements have. Called afresh on each run. */
export type Attempt<T> = (client: pg.PoolClient) => Promise<Outcome<T>>;

/**
 * PostgreSQL's bulk kind: units of one kind that a batch runs together, in one savepoint. `run`
 * sends one statement for them all on the batch's connection (where a unit alone takes several)
 * and answers each one's Outcome, in order; it is asynchronous, and a batch of this kind only
 * sends it alone, as a transaction of its own. When it throws, nothing of it stands and each unit
 * runs alone, as its `attempt`: a unit that fails still fails only its caller. (SQLite's `Bulk`,
 * ../../sqlite/group-commit.ts, is another contract: synchronous, answering plain values.)
 */
export interface BulkStatement<I, T> {
  run(client: pg.PoolClient, items: readonly I[]): Promise<Outcome<T>[]>;
}

export interface Unit {
  attempt: Attempt<unknown>;
  /** Its kind and data when it may run with others of its kind (submitBulk). */
  bulk: { kind: BulkStatement<unknown, unknown>; item: unknown } | null;
  runs: number;
  /** When it was last queued (now()), for queueWaitMs: a unit queued again after a deadlock is judged from then. */
  queuedAt: number;
  /** Its statements were sent in a batch that has not ended, and may commit. */
  sent: boolean;
  /** Its caller was answered early (deadline, signal): never started, never queued again. */
  answered: boolean;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  /** Followed by the observer (tracing on). */
  observed: ObservedUnit<unknown> | undefined;
}

/** Refused by admission control, or expired in the queue: nothing of it was sent. */
export class StoreOverloaded extends Error {
  override readonly name = 'StoreOverloaded';
  readonly code = OVERLOADED;
}

/** The pause before a unit hit by a deadlock or serialization failure runs again: longer, and spread, with each run. */
export function rerunDelayMs(runs: number, random: () => number = Math.random): number {
  return 5 * runs + random() * 20 * runs;
}

export interface UnitQueueOptions {
  /** Units waiting at most; more are refused at once. */
  maxQueued: number;
  /** How long a unit may wait in the queue for a batch. */
  queueWaitMs: number;
  /** A batch's whole run: with queueWaitMs, the most a caller waits for its answer. */
  transactionMs: number;
  /** How often a unit hit by a deadlock or serialization failure is run in all. */
  maxRuns: number;
  /** The pause before a unit runs again. */
  timers: Timers;
  /** Each unit's whole deadline. */
  deadlineTimers: Timers;
  now(): number;
  log: Logger;
  /** Hears each unit queued from now on, when there is one (tracing). */
  observer(): UnitObserver | null;
  /** A unit was queued (first or again): the loops see whether a batch should begin. */
  queued(): void;
}

export class UnitQueue {
  private readonly queue: Unit[] = [];
  /** Units refused by admission control or expired in the queue. */
  refused = 0;

  constructor(private readonly o: UnitQueueOptions) {}

  /** Units waiting for a batch. */
  get length(): number {
    return this.queue.length;
  }

  /** Queues a unit; its promise is answered by its batch, or early (deadline, signal). */
  admit<T>(attempt: Attempt<T>, bulk: Unit['bulk'], signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(new CallCancelled());
    if (this.queue.length >= this.o.maxQueued) {
      this.refused += 1;
      return Promise.reject(new StoreOverloaded(`${this.queue.length} store transactions already wait for the database`));
    }
    return new Promise<T>((resolve, reject) => {
      // The caller's answer comes within queueWaitMs + transactionMs, whatever the database does.
      const wholeMs = this.o.queueWaitMs + this.o.transactionMs;
      const deadline = this.o.deadlineTimers.setTimeout(() => this.answerEarly(unit, new StoreOverloaded(`waited more than ${wholeMs} ms for the database`)), wholeMs);
      const onAbort = (): void => this.answerEarly(unit, new CallCancelled());
      signal?.addEventListener('abort', onAbort, { once: true });
      const settled = (): void => {
        this.o.deadlineTimers.clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
      };
      const observed = this.o.observer()?.queued(attempt);
      const unit: Unit = {
        observed,
        attempt: observed?.run ?? attempt,
        bulk,
        runs: 1,
        queuedAt: this.o.now(),
        sent: false,
        answered: false,
        resolve: (value) => {
          settled();
          resolve(value as T);
        },
        reject: (err) => {
          settled();
          reject(err);
        },
      };
      this.enqueue(unit, false);
    });
  }

  /** The units a batch would take now are all of one bulk kind: it would send their statement alone. */
  loneNext(maxBatch: number): boolean {
    const kind = this.queue[0]?.bulk?.kind;
    if (kind === undefined) return false;
    const n = Math.min(maxBatch, this.queue.length);
    for (let i = 1; i < n; i++) if (this.queue[i]!.bulk?.kind !== kind) return false;
    return true;
  }

  /**
   * The units queued now, up to maxBatch, taken by a batch; those that waited longer than
   * queueWaitMs since they were (last) queued fail unwritten instead.
   */
  take(maxBatch: number): Unit[] {
    const oldest = this.o.now() - this.o.queueWaitMs;
    const taken: Unit[] = [];
    for (const unit of this.queue.splice(0, Math.max(1, Math.min(maxBatch, this.queue.length)))) {
      if (unit.queuedAt >= oldest) taken.push(unit);
      else this.answerEarly(unit, new StoreOverloaded(`waited more than ${this.o.queueWaitMs} ms for the database`));
    }
    return taken;
  }

  /** Units a batch took but never started: first in the queue again, as if never taken. */
  putBack(units: Unit[]): void {
    for (const unit of units) unit.sent = false;
    this.queue.unshift(...units);
  }

  /** Every queued unit fails unwritten with `err` (no connection to be had: all would wait for the same host). */
  failAll(err: unknown): void {
    for (const unit of this.queue.splice(0)) unit.reject(err);
  }

  /**
   * A unit whose batch ended without it, by a deadlock or serialization failure: queued again,
   * first, after a pause. False when it may not run again (another error, its runs used up, its
   * caller answered already): the caller answers it.
   */
  rerun(unit: Unit, err: unknown): boolean {
    // Its caller was answered already: it wrote nothing, and nobody waits for another run.
    if (!isRetryable(err) || unit.runs >= this.o.maxRuns || unit.answered) return false;
    this.o.log.warn({ err: { message: (err as Error).message }, run: unit.runs }, 'store transaction hit a deadlock or serialization failure: running it again');
    unit.runs += 1;
    unit.sent = false;
    this.o.timers.setTimeout(() => {
      if (unit.answered) return;
      unit.queuedAt = this.o.now();
      this.enqueue(unit, true);
    }, rerunDelayMs(unit.runs));
    return true;
  }

  private enqueue(unit: Unit, first: boolean): void {
    unit.sent = false;
    if (first) this.queue.unshift(unit);
    else this.queue.push(unit);
    this.o.queued();
  }

  /**
   * Answers a unit's caller before its batch ends (its whole deadline, its signal). Not sent yet
   * (queued, taken by a batch that has not reached it, waiting to run again), it is dropped and
   * fails with `unwritten`; sent, it may yet commit: its caller hears OutcomeUnknown.
   */
  private answerEarly(unit: Unit, unwritten: Error): void {
    if (unit.answered) return;
    unit.answered = true;
    const queued = this.queue.indexOf(unit);
    if (queued >= 0) this.queue.splice(queued, 1);
    if (unit.sent) {
      // Why it was answered: its whole deadline, or its caller's signal (the request's own deadline, a client gone).
      const why = unwritten instanceof StoreOverloaded ? new DeadlineExceeded('a store transaction', this.o.queueWaitMs + this.o.transactionMs) : unwritten;
      unit.reject(new OutcomeUnknown(why));
      return;
    }
    if (unwritten instanceof StoreOverloaded) this.refused += 1;
    unit.reject(unwritten);
  }
}
