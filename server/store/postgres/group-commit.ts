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
// caller hears OutcomeUnknown (it may commit).
import pg from 'pg';
import type { Logger } from 'pino';
import { isRetryable, mapError, undoAfter } from './db.ts';
import { DeadlineExceeded } from './deadlines.ts';
import { destroyConnection } from './pg-internals.ts';
import { CallCancelled, OVERLOADED, OutcomeUnknown } from '../../domain/store-errors.ts';
import { realTimers, type Timers } from '../../timers.ts';
import type { ObservedUnit, UnitObserver } from '../../domain/unit-observer.ts';
import { LoneTurns, type Turn } from './group-commit/turns.ts';

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
 * Units of one kind that a batch runs together, in one savepoint: `run` writes them all (one
 * statement, where a unit alone takes several) and answers each one's outcome, in order. When
 * it throws, the savepoint is rolled back and each unit runs alone, as its `attempt`: a unit
 * that fails still fails only its caller.
 */
export interface Bulk<I, T> {
  run(client: pg.PoolClient, items: readonly I[]): Promise<Outcome<T>[]>;
}

interface Job {
  attempt: Attempt<unknown>;
  /** Its kind and data when it may run with others of its kind (submitBulk). */
  bulk: { kind: Bulk<unknown, unknown>; item: unknown } | null;
  runs: number;
  /** When it was last queued (opts.now), for queueWaitMs: a unit queued again after a deadlock is judged from then. */
  queuedAt: number;
  /** Where it is: its statements were `sent` in a batch that has not ended (it may commit), or not. */
  phase: 'queued' | 'taken' | 'sent' | 'waiting';
  /** Its caller was answered early (deadline, signal): never started, never queued again. */
  answered: boolean;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  /** Followed by the observer (tracing on). */
  observed: ObservedUnit<unknown> | undefined;
}

/** A batch's units in the order they run: alone, or together with the others of their bulk kind. */
type Group = { kind: Bulk<unknown, unknown> | null; jobs: Job[] };

/** The state of the batch executing on `client`. */
interface Run {
  client: pg.PoolClient;
  /** The savepoint `unit` is open (the next unit may start at once). */
  savepoint: boolean;
  done: Done[];
  /** It changed transactions (see the file's comment). */
  holds: boolean;
  /** Units that a bulk statement wrote. */
  bulkUnits: number;
  /** Its one statement ran outside BEGIN/COMMIT: it is committed already. */
  committed: boolean;
  /** Destroys the connection when the batch outlives transactionMs; cleared once it is over. */
  deadline: unknown;
  /** Its place among the lone statements in flight, while it may send one (see the file's comment). */
  turn: Turn | null;
}

type Done = { job: Job; ok: true; outcome: Outcome<unknown> } | { job: Job; ok: false; err: unknown };

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

/** Batches in a row without a change to transactions before several may execute at once: a
 * workload of payouts never gets there, one of orders at once (the first few batches). */
const QUIET_BATCHES = 8;

/** SQLSTATE of a statement sent after an earlier one aborted the (sub)transaction. */
const IN_FAILED_TRANSACTION = '25P02';

/** Refused by admission control, or expired in the queue: nothing of it was sent. */
export class StoreOverloaded extends Error {
  override readonly name = 'StoreOverloaded';
  readonly code = OVERLOADED;
}

/** The database answered (an error of its own): the statement's outcome is known. */
const answeredByDatabase = (err: unknown): boolean => err instanceof pg.DatabaseError;

export class PgGroupCommitter {
  private readonly queue: Job[] = [];
  /** Drain loops running, and those of them waiting to take their next batch's first unit. */
  private drains = 0;
  private waiting = 0;
  /** Batches executing or committing that changed transactions (see above). */
  private holding = 0;
  /** Batches in a row, up to QUIET_BATCHES, that committed without changing transactions. */
  private quiet = 0;
  private readonly committing = new Set<Promise<void>>();
  private readonly turns = new LoneTurns();
  /** Batches committed, the units of work they held, and how many of those a bulk statement wrote: for diagnostics and benchmarks. */
  readonly stats = { batches: 0, units: 0, bulkUnits: 0 };
  /** Units refused by admission control or expired in the queue. */
  refused = 0;
  /** Hears each unit's wait and commit (tracing: observability/tracing/); null, nothing is called. */
  observer: UnitObserver | null = null;
  private readonly maxBatch: number;
  private readonly maxCommitting: number;
  private readonly maxExecuting: number;
  private readonly maxRuns: number;
  private readonly timers: Timers;
  private readonly deadlineTimers: Timers;
  private readonly transactionMs: number;
  private readonly queueWaitMs: number;
  private readonly maxQueued: number;
  private readonly now: () => number;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: GroupCommitOptions,
  ) {
    this.maxBatch = opts.maxBatch ?? 32;
    this.maxCommitting = opts.maxCommitting ?? 4;
    this.maxExecuting = opts.maxExecuting ?? 3;
    this.maxRuns = opts.maxRuns ?? 4;
    this.timers = opts.timers ?? realTimers;
    this.deadlineTimers = opts.deadlineTimers ?? realTimers;
    this.transactionMs = opts.transactionMs ?? 4_000;
    this.queueWaitMs = opts.queueWaitMs ?? 2_000;
    this.maxQueued = opts.maxQueued ?? 1_024;
    this.now = opts.now ?? (() => performance.now());
  }

  /** Units waiting for a batch. */
  get queued(): number {
    return this.queue.length;
  }

  /** Loops taking batches off the queue (each executes one batch at a time). */
  get loops(): number {
    return this.drains;
  }

  /** Loops waiting for their turn to send a lone bulk statement. */
  get awaitingTurn(): number {
    return this.turns.waiting;
  }

  /** Queues a unit of work; resolves with its value once the batch that ran it is committed. */
  submit<T>(attempt: Attempt<T>, signal?: AbortSignal): Promise<T> {
    return this.submitJob(attempt, null, signal);
  }

  /** As submit, but the batch runs it with the other units of `kind` it holds (see Bulk); alone, it is `attempt`. */
  submitBulk<I, T>(kind: Bulk<I, T>, item: I, attempt: Attempt<T>, signal?: AbortSignal): Promise<T> {
    return this.submitJob(attempt, { kind: kind as Bulk<unknown, unknown>, item }, signal);
  }

  private submitJob<T>(attempt: Attempt<T>, bulk: Job['bulk'], signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(new CallCancelled());
    if (this.queue.length >= this.maxQueued) {
      this.refused += 1;
      return Promise.reject(new StoreOverloaded(`${this.queue.length} store transactions already wait for the database`));
    }
    return new Promise<T>((resolve, reject) => {
      // The caller's answer comes within queueWaitMs + transactionMs, whatever the database does.
      const wholeMs = this.queueWaitMs + this.transactionMs;
      const deadline = this.deadlineTimers.setTimeout(() => this.answerEarly(job, new StoreOverloaded(`waited more than ${wholeMs} ms for the database`)), wholeMs);
      const onAbort = (): void => this.answerEarly(job, new CallCancelled());
      signal?.addEventListener('abort', onAbort, { once: true });
      const settled = (): void => {
        this.deadlineTimers.clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
      };
      const observed = this.observer?.queued(attempt);
      const job: Job = {
        observed,
        attempt: observed?.run ?? attempt,
        bulk,
        runs: 1,
        queuedAt: this.now(),
        phase: 'queued',
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
      this.enqueue(job, false);
    });
  }

  /**
   * Answers a unit's caller before its batch ends (its whole deadline, its signal). Not sent yet
   * (queued, taken by a batch that has not reached it, waiting to run again), it is dropped and
   * fails with `unwritten`; sent, it may yet commit: its caller hears OutcomeUnknown.
   */
  private answerEarly(job: Job, unwritten: Error): void {
    if (job.answered) return;
    job.answered = true;
    const queued = this.queue.indexOf(job);
    if (queued >= 0) this.queue.splice(queued, 1);
    if (job.phase === 'sent') {
      // Why it was answered: its whole deadline, or its caller's signal (the request's own deadline, a client gone).
      const why = unwritten instanceof StoreOverloaded ? new DeadlineExceeded('a store transaction', this.queueWaitMs + this.transactionMs) : unwritten;
      job.reject(new OutcomeUnknown(why));
      return;
    }
    if (unwritten instanceof StoreOverloaded) this.refused += 1;
    job.reject(unwritten);
  }

  private enqueue(job: Job, first: boolean): void {
    job.phase = 'queued';
    if (first) this.queue.unshift(job);
    else this.queue.push(job);
    // A loop about to take a batch takes this job too; otherwise another loop, if allowed.
    if (this.waiting === 0 && this.drains < this.executingAllowed()) void this.drain();
    else if (this.turns.waiting > 0 && this.turnOpen(false)) this.turns.wake(false);
  }

  private turnOpen(ended: boolean): boolean {
    return this.turns.open(this.loneNext(), this.queue.length, ended);
  }

  /** The units a batch would take now are all of one bulk kind: it would send their statement alone. */
  private loneNext(): boolean {
    const kind = this.queue[0]?.bulk?.kind;
    if (kind === undefined) return false;
    const n = Math.min(this.maxBatch, this.queue.length);
    for (let i = 1; i < n; i++) if (this.queue[i]!.bulk?.kind !== kind) return false;
    return true;
  }

  /** Waits until the next batch may begin; its turn when it would send a lone statement, else null. */
  private async turn(): Promise<Turn | null> {
    let ended = false;
    for (;;) {
      while (this.committing.size >= this.maxCommitting) await Promise.race(this.committing);
      if (this.turnOpen(ended)) return this.loneNext() ? this.turns.take(Math.min(this.maxBatch, this.queue.length)) : null;
      ended = await this.turns.wait();
    }
  }

  /** More than one batch at once only after a run of batches that took no hot row. */
  private executingAllowed(): number {
    return this.holding > 0 || this.quiet < QUIET_BATCHES ? 1 : this.maxExecuting;
  }

  /** Takes batches off the queue until it is empty; several of these run under load. */
  private async drain(): Promise<void> {
    this.drains += 1;
    try {
      for (;;) {
        let turn: Turn | null = null;
        this.waiting += 1;
        try {
          // One turn of the event loop, so that requests that arrived meanwhile join this batch.
          await new Promise<void>((resolve) => this.timers.setImmediate(resolve));
          // Checked in the same tick as enqueue() looks at `waiting`: no job is left behind.
          if (this.queue.length === 0) return;
          turn = await this.turn();
          // Its units may have been answered meanwhile (a lone statement's turn has units).
          if (turn === null && this.queue.length === 0) return;
        } finally {
          this.waiting -= 1;
        }
        await this.runBatch(turn);
        // A further loop retires once hot rows are in play; at least one loop goes on.
        if (this.drains > this.executingAllowed()) return;
      }
    } finally {
      this.drains -= 1;
    }
  }

  /** Executes one batch, then lets it commit in the background. */
  private async runBatch(turn: Turn | null): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      // No connection within the deadline (database down or pool starved): every queued unit
      // would wait for the same host; they fail now, unwritten.
      this.turns.end({ turn }, false);
      for (const job of this.queue.splice(0)) job.reject(err);
      return;
    }
    const deadline = this.deadlineTimers.setTimeout(() => {
      this.opts.onDestroyed?.();
      destroyConnection(client, new DeadlineExceeded('a store transaction', this.transactionMs));
    }, this.transactionMs);
    const run: Run = { client, savepoint: false, done: [], holds: false, bulkUnits: 0, committed: false, deadline, turn };
    let fatal: unknown;
    try {
      fatal = await this.execute(run);
    } finally {
      this.turns.end(run, true);
    }
    const commit = this.commit(run, fatal);
    this.committing.add(commit);
    void commit.finally(() => {
      this.committing.delete(commit);
      if (run.holds) this.holding -= 1;
      this.quiet = run.holds ? 0 : Math.min(QUIET_BATCHES, this.quiet + 1);
    });
  }

  /**
   * The units queued now: a bulk kind's alone as their one statement (runWhole), else BEGIN and
   * each in the savepoint `unit` (a bulk kind's units in one). Returns the error that leaves
   * nothing of the batch standing, or null.
   */
  private async execute(run: Run): Promise<unknown> {
    // The units queued now, not those arriving while it executes: under a steady stream a batch
    // that took every arrival kept executing, one unit after the other, while its first caller
    // waited for the COMMIT (p99 29 ms at 1 000 orders/s); arrivals go to the next batch.
    const groups = inGroups(this.fresh(this.queue.splice(0, Math.max(1, Math.min(this.maxBatch, this.queue.length)))));
    if (groups.length === 0) {
      run.committed = true; // every unit it took had waited too long: nothing to commit
      return null;
    }
    if (this.turns.claim(run, groups.length === 1 && groups[0]!.kind !== null ? groups[0]!.jobs.length : 0)) {
      const ran = await this.runWhole(run, groups[0]!.kind!, groups[0]!.jobs);
      this.turns.end(run, true);
      if (ran) return null;
      groups[0]!.kind = null;
    }
    try {
      await run.client.query('BEGIN; SAVEPOINT unit');
      run.savepoint = true;
    } catch (err) {
      // Could not even begin (the connection died meanwhile): the units it took fail.
      for (const job of groups.flatMap((g) => g.jobs)) run.done.push({ job, ok: false, err });
      return err;
    }
    let i = 0;
    try {
      for (; i < groups.length; i++) {
        const group = groups[i]!;
        const more = i + 1 < groups.length;
        // A unit whose caller was answered while earlier ones ran is never started.
        group.jobs = group.jobs.filter((j) => !j.answered);
        if (group.kind !== null && group.jobs.length > 0 && (await this.runBulk(run, group.kind, group.jobs, more))) continue;
        for (const [k, job] of group.jobs.entries()) {
          if (!job.answered) await this.runUnit(run, job, more || k + 1 < group.jobs.length);
        }
      }
      return null;
    } catch (err) {
      // The batch's own statements failed (connection lost): nothing of it stands. The units it
      // had not started go back to the queue, as if it had never taken them.
      for (const job of groups[i]!.jobs) if (!job.answered && !run.done.some((d) => d.job === job)) run.done.push({ job, ok: false, err });
      const untouched = groups.slice(i + 1).flatMap((g) => g.jobs.filter((j) => !j.answered));
      for (const job of untouched) job.phase = 'queued';
      this.queue.unshift(...untouched);
      return err;
    }
  }

  /**
   * A batch of one bulk kind's units only: its one statement is a transaction of its own, without
   * the round trips of BEGIN, a savepoint and COMMIT (a third of a batch of orders' waits). False
   * when it failed: nothing of it stands, and the units run alone in a transaction.
   */
  private async runWhole(run: Run, kind: Bulk<unknown, unknown>, jobs: Job[]): Promise<boolean> {
    const outcomes = await this.bulkOutcomes(run, kind, jobs);
    if (outcomes instanceof OutcomeUnknown) {
      // The statement was sent and commits by itself: it may stand. No second try.
      for (const job of jobs) run.done.push({ job, ok: false, err: outcomes });
      run.committed = true;
      return true;
    }
    if (outcomes === null) {
      notWritten(jobs); // the database refused the statement: a transaction of its own, nothing of it stands
      return false;
    }
    jobs.forEach((job, k) => this.succeeded(run, job, outcomes[k]!));
    run.bulkUnits += jobs.length;
    run.committed = true;
    return true;
  }

  /**
   * The outcomes of a bulk run, or null when it threw (logged); OutcomeUnknown when it ran
   * alone (a transaction of its own) and its connection was lost before the answer.
   */
  private async bulkOutcomes(run: Run, kind: Bulk<unknown, unknown>, jobs: Job[]): Promise<Outcome<unknown>[] | OutcomeUnknown | null> {
    for (const job of jobs) {
      job.phase = 'sent';
      job.observed?.started(performance.now());
    }
    try {
      const outcomes = await kind.run(run.client, jobs.map((j) => j.bulk!.item));
      if (outcomes.length !== jobs.length) throw new Error(`a bulk run answered ${outcomes.length} outcomes for ${jobs.length} units`);
      return outcomes;
    } catch (err) {
      if (!run.savepoint && isConnectionLost(err)) return new OutcomeUnknown(err);
      this.opts.log.warn({ err: { message: (err as Error).message }, units: jobs.length }, 'a bulk statement failed: its units run one by one');
      return null;
    }
  }

  /** One unit, in its own savepoint; `more`: another unit follows it in this batch. */
  private async runUnit(run: Run, job: Job, more: boolean): Promise<void> {
    await this.openSavepoint(run);
    // Its caller may have been answered while the savepoint opened: then it never starts.
    if (job.answered) return;
    let outcome: Outcome<unknown>;
    job.phase = 'sent';
    job.observed?.started(performance.now());
    try {
      outcome = await job.attempt(run.client);
    } catch (err) {
      await undoAfter(err, () => this.rollbackUnit(run));
      run.done.push({ job, ok: false, err });
      return;
    }
    if (await this.releaseUnit(run, more)) this.succeeded(run, job, outcome);
    else run.done.push({ job, ok: false, err: caughtInside() });
  }

  /** A bulk kind's units in one savepoint; false when that failed and nothing of them stands (each then runs alone). */
  private async runBulk(run: Run, kind: Bulk<unknown, unknown>, jobs: Job[], more: boolean): Promise<boolean> {
    await this.openSavepoint(run);
    const outcomes = await this.bulkOutcomes(run, kind, jobs);
    if (outcomes === null || outcomes instanceof OutcomeUnknown) {
      await this.rollbackUnit(run);
      notWritten(jobs);
      return false;
    }
    // Last in the batch, its savepoint is left to the COMMIT: a bulk run catches no error of
    // its own, so there is no aborted subtransaction to find (what releaseUnit looks for).
    if (more && !(await this.releaseUnit(run, more))) {
      notWritten(jobs);
      return false;
    }
    jobs.forEach((job, k) => this.succeeded(run, job, outcomes[k]!));
    run.bulkUnits += jobs.length;
    return true;
  }

  private async openSavepoint(run: Run): Promise<void> {
    if (run.savepoint) return;
    await run.client.query('SAVEPOINT unit');
    run.savepoint = true;
  }

  /** Undoes the unit alone, and releases the locks it took; the savepoint stays for the next one. */
  private async rollbackUnit(run: Run): Promise<void> {
    await run.client.query('ROLLBACK TO SAVEPOINT unit');
    run.savepoint = true;
  }

  /**
   * Keeps the unit's writes; one round trip also opens the next one's savepoint when `more`.
   * False when the unit had caught a database error itself and gone on: then nothing of it
   * may commit, and it is rolled back.
   */
  private async releaseUnit(run: Run, more: boolean): Promise<boolean> {
    try {
      await run.client.query(more ? 'RELEASE SAVEPOINT unit; SAVEPOINT unit' : 'RELEASE SAVEPOINT unit');
      run.savepoint = more;
      return true;
    } catch (err) {
      if ((err as { code?: unknown }).code !== IN_FAILED_TRANSACTION) throw err;
      await this.rollbackUnit(run);
      return false;
    }
  }

  private succeeded(run: Run, job: Job, outcome: Outcome<unknown>): void {
    run.done.push({ job, ok: true, outcome });
    if (!run.holds && (outcome.touched?.size ?? 0) > 0) {
      run.holds = true;
      this.holding += 1;
    }
  }

  private async commit({ client, done, bulkUnits, committed, deadline }: Run, fatal: unknown): Promise<void> {
    let broken: Error | undefined;
    if (this.observer) {
      const at = performance.now();
      for (const d of done) d.job.observed?.committing(at);
    }
    if (fatal === null) {
      try {
        const result = committed ? null : await client.query('COMMIT');
        if (result?.command === 'ROLLBACK') throw new Error('batch rolled back at COMMIT');
        this.stats.batches += 1;
        this.stats.units += done.length;
        this.stats.bulkUnits += bulkUnits;
      } catch (err) {
        // COMMIT was sent: without the database's own answer, it may have gone in.
        fatal = answeredByDatabase(err) ? err : new OutcomeUnknown(err);
      }
    }
    this.deadlineTimers.clearTimeout(deadline);
    if (fatal !== null) {
      // A connection whose ROLLBACK failed is in an unknown state: destroyed rather than reused.
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
    }
    client.release(broken);
    if (fatal !== null) {
      if (fatal instanceof OutcomeUnknown) this.opts.log.warn({ err: { message: errorMessage(fatal.cause) }, units: done.length }, 'connection lost at COMMIT: outcome unknown');
      for (const d of done) this.settle(d, fatal);
      return;
    }
    const deliveries = done.some((d) => d.ok && d.outcome.notify);
    const changed = new Set<string>();
    for (const d of done) if (d.ok && d.outcome.touched) for (const id of d.outcome.touched) changed.add(id);
    if (changed.size > 0) {
      // Other instances' cached pages must be stale before the writer hears of its write.
      await this.notifyCommitted(deliveries, changed);
      for (const d of done) this.settle(d, null);
      return;
    }
    // Deliveries alone: other instances would only find them sooner, and this instance's
    // workers wake in settle; a round trip (p99 3 ms at 1 000 orders/s) the caller need not wait.
    for (const d of done) this.settle(d, null);
    await this.notifyCommitted(deliveries, changed);
  }

  /** Tells every instance what the committed batch changed (see GroupCommitOptions.notify). */
  private async notifyCommitted(deliveries: boolean, changed: ReadonlySet<string>): Promise<void> {
    if (!deliveries && changed.size === 0) return;
    try {
      await this.opts.notify(deliveries, changed);
    } catch (err) {
      this.opts.log.warn({ err: { message: (err as Error).message } }, 'could not notify the other instances of a commit: they see it within their safety bounds');
    }
  }

  /**
   * After the batch ended. When it did not commit, every unit gets the batch's error, also those
   * that had failed on their own: their error may rest on data of the batch that is now gone.
   */
  private settle(d: Done, fatal: unknown): void {
    if (fatal === null && d.ok) {
      d.outcome.committed();
      d.job.observed?.ended(performance.now(), true);
      d.job.resolve(d.outcome.value);
      return;
    }
    const err = fatal ?? (d.ok ? null : d.err);
    // Its caller was answered already: it wrote nothing, and nobody waits for another run.
    if (isRetryable(err) && d.job.runs < this.maxRuns && !d.job.answered) {
      const job = d.job;
      this.opts.log.warn({ err: { message: (err as Error).message }, run: job.runs }, 'store transaction hit a deadlock or serialization failure: running it again');
      job.runs += 1;
      job.phase = 'waiting';
      this.timers.setTimeout(() => {
        if (job.answered) return;
        job.queuedAt = this.now();
        this.enqueue(job, true);
      }, 5 * job.runs + Math.random() * 20 * job.runs);
      return;
    }
    d.job.observed?.ended(performance.now(), false);
    d.job.reject(mapError(err));
  }

  /** The jobs that may still run, now taken; those that waited too long since they were (last) queued fail unwritten. */
  private fresh(jobs: Job[]): Job[] {
    const oldest = this.now() - this.queueWaitMs;
    const taken: Job[] = [];
    for (const job of jobs) {
      if (job.queuedAt >= oldest) {
        job.phase = 'taken';
        taken.push(job);
      } else this.answerEarly(job, new StoreOverloaded(`waited more than ${this.queueWaitMs} ms for the database`));
    }
    return taken;
  }
}

/**
 * Units whose bulk statement was undone: nothing of them can commit, so a caller answered
 * before each runs alone hears that nothing was written, not OutcomeUnknown.
 */
function notWritten(jobs: Job[]): void {
  for (const job of jobs) job.phase = 'taken';
}

/** No answer from the database (socket lost, destroyed by a deadline): not a statement's own error. */
function isConnectionLost(err: unknown): boolean {
  return !answeredByDatabase(err);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function caughtInside(): Error {
  return new Error('transaction rolled back: a statement failed earlier in it and the error was caught inside the transaction');
}

/** The jobs in the order they were queued, each bulk kind's together where its first one stands. */
function inGroups(jobs: Job[]): Group[] {
  const groups: Group[] = [];
  const byKind = new Map<Bulk<unknown, unknown>, Group>();
  for (const job of jobs) {
    const kind = job.bulk?.kind ?? null;
    const group = kind === null ? undefined : byKind.get(kind);
    if (group !== undefined) {
      group.jobs.push(job);
      continue;
    }
    const created: Group = { kind, jobs: [job] };
    groups.push(created);
    if (kind !== null) byKind.set(kind, created);
  }
  return groups;
}
