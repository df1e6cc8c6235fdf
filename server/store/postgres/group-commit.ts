// Group commit for PostgreSQL, as the SQLite store has (../sqlite/group-commit.ts). A durable
// COMMIT waits for the WAL flush (milliseconds), and a row that every payout of an environment
// updates (its wallet) stays locked until then: one transaction per request would run those
// payouts one flush at a time. So the transactions submitted while a batch runs go together
// into the next database transaction, each inside its own SAVEPOINT (a failing one rolls back
// alone and fails only its caller), and every caller is answered only after the one COMMIT is
// durable, failures included: a caller told "duplicate" reads a winner that is committed.
//
// While a batch commits (waits for the flush), the next one already executes on another
// connection. Executing is round trips, one statement after another on one connection, so
// under load more than one batch executes at once (maxExecuting): a further batch starts only
// when every running one is past taking its first unit and units are still queued, so a
// burst that one batch can take still goes into one COMMIT. A batch takes the units queued
// when it begins; those arriving while it executes go to the next one. Only while no batch in
// flight has changed transactions (payouts, refunds): those update hot rows (an environment's wallet),
// and a second batch would wait on the first one's lock with its other units behind it
// (measured: payouts 2.3 times slower), so they run one batch at a time as before, each
// executing while earlier ones commit. Batches that run at once can still, rarely, deadlock,
// as batches of two instances always could: the database aborts one statement, that unit
// rolls back to its savepoint and runs again in a later batch (as a deadlocked transaction
// ran again before), the rest of its batch goes on.
//
// Units of a bulk kind (submitBulk: new orders, bulk-orders.ts) go together: one statement
// writes them all in one savepoint, and a batch holding nothing else sends that statement
// alone, a transaction of its own (no BEGIN, savepoint or COMMIT round trip). Should the
// statement fail, nothing of it stands and each of its units runs alone, as any unit does.
// Lone statements take turns (LONE_IN_FLIGHT): each pays a WAL flush, and three at once held
// about 8 orders each where one group commit of the same load holds 16 (issue 58). At most two
// are in flight; with one in flight the next begins once as many units are queued as that one
// holds, or once a lone statement ends, and takes every unit queued then. Its units wait in the
// queue meanwhile, so their deadlines and signals answer them as any queued unit's do.
//
// At most 32 units a batch: each unit that writes gets a subtransaction id, and past 64 of
// them in one transaction PostgreSQL's snapshots slow down for every session (subxid overflow).
//
// Deadlines (deadlines.ts): a batch that has not had COMMIT's answer within transactionMs of
// taking its connection has that connection destroyed; a unit that waited in the queue longer
// than queueWaitMs before a batch took it fails unwritten; the queue holds at most maxQueued
// units, and a unit beyond that is refused at once (admission control: a slow database gets
// fast 503s, not a queue that grows memory). When no connection can be had, every queued unit
// fails: they would all wait for the same dead host. A batch whose connection is lost after
// COMMIT was sent (or after its lone statement was) answers OutcomeUnknown: it may have
// committed, and nothing but a retry with the same key can tell.
//
// A unit's caller may be answered before its batch ends: by the unit's whole deadline, or by
// its signal (the request deadline, a client that went away). Such a unit is never started
// afterwards and never queued again: still queued, taken by a batch that has not reached it, or
// waiting to run again after a deadlock, it is dropped and its caller hears that nothing was
// written; once its statements were sent it finishes or rolls back with its batch, and its
// caller hears OutcomeUnknown (it may commit), unless they were rolled back to its savepoint
// already (it failed, or its bulk statement did): then, too, nothing of it was written.
import type pg from 'pg';
import type { Logger } from 'pino';
import { realTimers, type Timers } from '../../timers.ts';
import type { UnitObserver } from '../../domain/unit-observer.ts';
import { beginBatch, executeBatch, type Run } from './group-commit/batch.ts';
import { commitBatch, type CommitStats } from './group-commit/commit.ts';
import { BatchLoops } from './group-commit/loops.ts';
import { LoneTurns } from './group-commit/turns.ts';
import { UnitQueue, type Attempt, type BulkStatement } from './group-commit/units.ts';

export { StoreOverloaded, type Attempt, type BulkStatement, type Outcome } from './group-commit/units.ts';

export interface GroupCommitOptions {
  /** Units a batch takes at most (see above why not more). */
  maxBatch?: number;
  /** Batches waiting for their COMMIT at once; the rest of the pool stays for reads. */
  maxCommitting?: number;
  /** Batches executing their units at once. */
  maxExecuting?: number;
  /** How often a unit hit by a deadlock or serialization failure is run in all. */
  maxRuns?: number;
  /**
   * Sends the batch's notifications once its COMMIT is durable: that deliveries are due, and
   * which environments' transactions changed; called only when there is either, and never for
   * a batch that did not commit. A batch that changed transactions notifies before any of its
   * callers is answered; one that only queued deliveries answers first. Not inside the
   * batch: a transaction that NOTIFYs holds PostgreSQL's one notification-queue lock from its
   * COMMIT until its WAL flush, so every notifying batch (every order's) would commit one
   * flush after the other (pgbench, 32 clients: a 5× slower insert). Its failure is reported
   * here, never to the callers (their data is committed).
   */
  notify(deliveries: boolean, changed: ReadonlySet<string>): Promise<unknown>;
  log: Logger;
  /** The turn a batch waits for its company, a retry's pause and the batch deadline (default: real timers). */
  timers?: Timers;
  /** What the batch deadline waits with (default: real timers). */
  deadlineTimers?: Timers;
  /** A batch's whole run, from taking its connection to COMMIT's answer (default 4 s). */
  transactionMs?: number;
  /** How long a unit may wait in the queue for a batch (default 2 s). */
  queueWaitMs?: number;
  /** Units waiting at most; more are refused at once (default 1 024). */
  maxQueued?: number;
  /** Milliseconds, for queue waits (default performance.now). */
  now?: () => number;
  /** Told of each connection destroyed for a missed deadline. */
  onDestroyed?: () => void;
}

/**
 * The committer: units (group-commit/units.ts) queue until a loop (loops.ts) takes them as a
 * batch, which executes (batch.ts) on a connection of its own and commits (commit.ts) while the
 * next batch executes; lone bulk statements take turns (turns.ts).
 */
export class PgGroupCommitter {
  /** Batches committed, the units of work they held, and how many of those a bulk statement wrote: for diagnostics and benchmarks. */
  readonly stats: CommitStats = { batches: 0, units: 0, bulkUnits: 0 };
  /** Hears each unit's wait and commit (tracing: observability/tracing/); null, nothing is called. */
  observer: UnitObserver | null = null;
  private readonly units: UnitQueue;
  private readonly turns = new LoneTurns();
  private readonly batchLoops: BatchLoops<Run>;

  constructor(pool: pg.Pool, opts: GroupCommitOptions) {
    const timers = opts.timers ?? realTimers;
    const deadlineTimers = opts.deadlineTimers ?? realTimers;
    const transactionMs = opts.transactionMs ?? 4_000;
    const log = opts.log;
    this.units = new UnitQueue({
      maxQueued: opts.maxQueued ?? 1_024,
      queueWaitMs: opts.queueWaitMs ?? 2_000,
      transactionMs,
      maxRuns: opts.maxRuns ?? 4,
      timers,
      deadlineTimers,
      now: opts.now ?? (() => performance.now()),
      log,
      observer: () => this.observer,
      queued: () => this.batchLoops.kick(),
    });
    const commit = { notify: opts.notify, log, deadlineTimers, stats: this.stats, rerun: this.units.rerun.bind(this.units) };
    const putBack = this.units.putBack.bind(this.units);
    this.batchLoops = new BatchLoops<Run>(this.units, this.turns, {
      maxBatch: opts.maxBatch ?? 32,
      maxCommitting: opts.maxCommitting ?? 4,
      maxExecuting: opts.maxExecuting ?? 3,
      timers,
      steps: {
        begin: (turn) => beginBatch(pool, turn, { deadlineTimers, transactionMs, onDestroyed: opts.onDestroyed }),
        execute: (run, units, hot) => executeBatch(run, units, { turns: this.turns, log, hot, putBack }),
        commit: (run, fatal) => commitBatch(run, fatal, commit),
      },
    });
  }

  /** Units waiting for a batch. */
  get queued(): number {
    return this.units.length;
  }

  /** Loops taking batches off the queue (each executes one batch at a time). */
  get loops(): number {
    return this.batchLoops.loops;
  }

  /** Loops waiting for their turn to send a lone bulk statement. */
  get awaitingTurn(): number {
    return this.turns.waiting;
  }

  /** Units refused by admission control or expired in the queue. */
  get refused(): number {
    return this.units.refused;
  }

  /** Queues a unit of work; resolves with its value once the batch that ran it is committed. */
  submit<T>(attempt: Attempt<T>, signal?: AbortSignal): Promise<T> {
    return this.units.admit(attempt, null, signal);
  }

  /** As submit, but the batch runs it with the other units of `kind` it holds (see BulkStatement); alone, it is `attempt`. */
  submitBulk<I, T>(kind: BulkStatement<I, T>, item: I, attempt: Attempt<T>, signal?: AbortSignal): Promise<T> {
    return this.units.admit(attempt, { kind: kind as BulkStatement<unknown, unknown>, item }, signal);
  }
}
