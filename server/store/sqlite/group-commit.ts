// Group commit. Every acknowledged write is synced to disk, and an fsync costs milliseconds;
// one per transaction would cap the service at a few hundred writes a second. So the work
// queued while a commit is in progress runs as one SQLite transaction: each unit of work
// inside its own SAVEPOINT (a failing unit rolls back alone), then one COMMIT, then one sync
// of the log, and only then is every unit's caller answered. Nobody is told "done" before the
// sync, so durability is unchanged; throughput scales with the load.
//
// The sync runs off the event loop: the connection commits with synchronous = NORMAL (the WAL
// frames reach the OS, no fsync) and `sync` (store.ts: fdatasync of the -wal file on libuv's
// thread pool) makes them durable, which is what synchronous = FULL does inside COMMIT, only
// without blocking every request and every webhook send for the fsync. The next batch starts
// after the sync, so no unit ever reads what is not yet durable.
//
// A unit may be submitted as not needing the sync (`durable = false`): the delivery queue's
// claims. A batch of such units only commits; a later synced commit covers its log frames
// too (the WAL is one file, synced up to its end). Losing a claim to a power cut only loses a
// lease: the delivery is due again and sent again, which at-least-once allows; a kill -9
// loses nothing that was committed (the frames are in the OS).
//
// A unit may carry its caller's signal: aborted while the unit is still queued (nobody waits
// for its answer any more: the request's deadline passed, its client went away), it is marked
// cancelled and never started (the batch skips it: no search through the queue, which a storm
// of deadlines would make quadratic); its caller hears CallCancelled (nothing written). Once
// started it runs to its end with its batch.
//
// Units of a bulk kind (submitBulk: new orders, bulk-orders.ts) go together: the batch's units
// of that kind run as one call, in one savepoint, a few statements for all of them where each
// alone takes several. Should that fail, its savepoint is rolled back and each of them runs
// alone, as any unit does, so a bad one fails only its caller.
//
// Some errors (an I/O error, an out-of-memory, some disk-full cases) make SQLite roll back the
// whole transaction by itself. Nothing of the batch stands then, so nobody may go on in it: a
// SAVEPOINT outside a transaction begins one of its own, which its RELEASE commits, without
// the sync and under an error answer. The unit (or the bulk call's units) and every unit the
// batch ran before are answered with that error; the units it had not started are queued
// again, at the head, for the next batch. A unit that swallows the error and writes on is
// refused too (assertInTransaction, which the store's connection calls before each statement).
import type Database from 'better-sqlite3';
import { CallCancelled } from '../../domain/store-errors.ts';
import type { ObservedUnit, UnitObserver } from '../../domain/unit-observer.ts';

/** How a unit runs: in the batch's transaction (default) or alone; answered after the log sync (default) or at once. */
export interface UnitOptions {
  transactional?: boolean;
  durable?: boolean;
  /** Its caller's signal: aborted while the unit is queued, the unit never starts. */
  signal?: AbortSignal | undefined;
}

/**
 * Units of one kind that a batch runs together, in one savepoint: `run` writes them all and
 * answers each one's value, in order (synchronously: better-sqlite3 is). When it throws, the
 * savepoint is rolled back and each unit runs alone.
 */
export interface Bulk<I, T> {
  run(items: readonly I[]): T[];
}

interface Job {
  /** Runs inside the open batch (transactional) or alone on the connection. */
  run(): unknown;
  /** Its kind and data when it may run with others of its kind (submitBulk). */
  bulk: { kind: Bulk<unknown, unknown>; item: unknown } | null;
  transactional: boolean;
  /** Its caller is answered only after the log sync. */
  durable: boolean;
  /** Followed by the observer (tracing on). */
  observed: ObservedUnit<() => unknown> | undefined;
  /** Queued until the batch starts it; cancelled: its caller was answered, it never starts. */
  state: 'queued' | 'started' | 'cancelled';
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * The transaction's own statements, prepared once: exec would parse the text again on every
 * batch and every unit (a SAVEPOINT and a RELEASE each), and a prepared one only runs.
 */
class Control {
  readonly begin: Database.Statement;
  readonly savepoint: Database.Statement;
  readonly release: Database.Statement;
  private readonly rollbackToUnit: Database.Statement;
  readonly commit: Database.Statement;
  readonly rollback: Database.Statement;

  constructor(private readonly raw: Database.Database) {
    this.begin = raw.prepare('BEGIN IMMEDIATE');
    this.savepoint = raw.prepare('SAVEPOINT unit');
    this.release = raw.prepare('RELEASE unit');
    this.rollbackToUnit = raw.prepare('ROLLBACK TO unit');
    this.commit = raw.prepare('COMMIT');
    this.rollback = raw.prepare('ROLLBACK');
  }

  /** Opens a unit's savepoint in the batch's transaction; throws when that has ended (a SAVEPOINT would begin another). */
  openUnit(): void {
    if (!this.raw.inTransaction) throw new TransactionEnded();
    this.savepoint.run();
  }

  /**
   * After a unit's error: its writes undone and its savepoint ended (ROLLBACK TO keeps it
   * open), null; or `err` itself when the whole transaction is gone (SQLite ended it, or the
   * undo failed), so that the batch stops there.
   */
  undoUnit(err: unknown): unknown {
    if (!this.raw.inTransaction) return err;
    try {
      this.rollbackToUnit.run();
      this.release.run();
      return null;
    } catch {
      return err;
    }
  }
}

/** A statement or savepoint refused: SQLite ended the batch's transaction, and outside one it would commit on its own. */
export class TransactionEnded extends Error {
  constructor() {
    super("the batch's transaction has ended (SQLite rolled it back after an error)");
  }
}

/** What a bulk call came to: all its units written, rolled back for each to run alone, or the error that ended the transaction. */
type BulkEnd = 'written' | 'alone' | { fatal: unknown };

interface Done {
  job: Job;
  ok: boolean;
  value: unknown;
}

export class GroupCommitter {
  private readonly queue: Job[] = [];
  /** Batches committed, units of work run, and how many of them a bulk call wrote: for diagnostics and benchmarks. */
  readonly stats = { batches: 0, units: 0, syncs: 0, bulkUnits: 0 };
  private draining: Promise<void> | null = null;
  /** The sync of the last commit while it runs: what a reader saw may not be durable before it ends. */
  private syncing: Promise<void> | null = null;
  /** Hears each unit's wait and commit (tracing: observability/tracing/); null, nothing is called. */
  observer: UnitObserver | null = null;
  private readonly control: Control;
  /** Between the batch's BEGIN and its COMMIT or ROLLBACK: every statement on the connection belongs in its transaction. */
  private inBatch = false;

  constructor(
    private readonly raw: Database.Database,
    private readonly maxBatch = 128,
    /** Makes the last commit durable; default nothing (the connection syncs in COMMIT). */
    private readonly sync: () => Promise<void> = async () => undefined,
  ) {
    this.control = new Control(raw);
  }

  /** Queues work; resolves with its value after the batch that ran it has committed. */
  submit<T>(run: () => Promise<T> | T, opts: UnitOptions = {}): Promise<T> {
    return this.queueJob(run, null, opts);
  }

  /** As submit, but the batch runs it with the other units of `kind` it holds (see Bulk); alone, it is `alone`. */
  submitBulk<I, T>(kind: Bulk<I, T>, item: I, alone: () => Promise<T> | T, signal?: AbortSignal): Promise<T> {
    return this.queueJob(alone, { kind: kind as Bulk<unknown, unknown>, item }, { signal });
  }

  private queueJob<T>(run: () => Promise<T> | T, bulk: Job['bulk'], { transactional = true, durable = true, signal }: UnitOptions): Promise<T> {
    if (signal?.aborted) return Promise.reject(new CallCancelled());
    return new Promise<T>((resolve, reject) => {
      const observed = this.observer?.queued(run);
      const job: Job = { run: observed?.run ?? run, bulk, transactional, durable, observed, state: 'queued', resolve: resolve as (v: unknown) => void, reject };
      if (signal !== undefined) watch(job, signal);
      this.queue.push(job);
      this.draining ??= this.drain();
    });
  }

  /**
   * Resolves once every commit made so far is durable. A read on another connection sees a
   * commit as soon as it is made, before its sync; the store answers such a read only after
   * this, so nobody is shown what a crash could still take back.
   */
  durable(): Promise<void> {
    return this.syncing ?? Promise.resolve();
  }

  /**
   * Throws TransactionEnded while a batch is open but SQLite has ended its transaction (an
   * I/O error, an out-of-memory): what runs then would run, and commit, on its own.
   */
  assertInTransaction(): void {
    if (this.inBatch && !this.raw.inTransaction) throw new TransactionEnded();
  }

  /** Resolves once everything queued so far has settled. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** The first job still to run, cancelled ones dropped on the way. */
  private head(): Job | undefined {
    while (this.queue.length > 0 && this.queue[0]!.state === 'cancelled') this.queue.shift();
    return this.queue[0];
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Yield one turn of the event loop so that requests that arrived meanwhile (while the
      // last commit's fsync blocked the loop) queue their work and join this batch.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const head = this.head();
      if (head === undefined) {
        // Checked and cleared in the same tick as submit() looks at it: no job is left behind.
        this.draining = null;
        return;
      }
      if (!head.transactional) {
        this.queue.shift();
        head.state = 'started';
        await settle(head);
        continue;
      }
      try {
        this.control.begin.run();
      } catch (err) {
        // Could not start a transaction (e.g. another process held the lock past busy_timeout).
        this.queue.shift();
        head.state = 'started';
        head.reject(err);
        continue;
      }
      this.inBatch = true;
      await this.batch(this.take());
    }
  }

  /** The transactional jobs at the head of the queue, up to maxBatch, in their groups. */
  private take(): Job[][] {
    const groups: Job[][] = [];
    const byKind = new Map<Bulk<unknown, unknown>, Job[]>();
    for (let n = 0; n < this.maxBatch; ) {
      const job = this.head();
      if (job === undefined || !job.transactional) break;
      this.queue.shift();
      n += 1;
      const kind = job.bulk?.kind;
      const group = kind === undefined ? undefined : byKind.get(kind);
      if (group !== undefined) group.push(job);
      else {
        groups.push([job]);
        if (kind !== undefined) byKind.set(kind, groups.at(-1)!);
      }
    }
    return groups;
  }

  private async batch(groups: Job[][]): Promise<void> {
    const done: Done[] = [];
    let fatal: unknown = null;
    for (const group of groups) {
      fatal = await this.runGroup(group, done);
      if (fatal !== null) break;
    }
    // The error ended the whole transaction: what the batch had not started goes back to the
    // head of the queue, as if it had never been taken.
    if (fatal !== null) this.queue.unshift(...groups.flat().filter((j) => j.state === 'queued'));
    await this.finish(done, fatal);
  }

  /** A group's units: a bulk kind's as one call when it can, else each alone; the error that ended the whole transaction, or null. */
  private async runGroup(group: Job[], done: Done[]): Promise<unknown> {
    const jobs = group.filter((j) => j.state === 'queued');
    if (jobs.length > 0 && jobs[0]!.bulk !== null) {
      const end = this.runBulk(jobs, done);
      if (end === 'written') return null;
      if (end !== 'alone') return end.fatal;
    }
    for (const job of jobs) {
      // A unit whose caller was answered while earlier ones ran is never started.
      if (job.state === 'cancelled') continue;
      job.state = 'started';
      const fatal = await this.runUnit(job, done);
      if (fatal !== null) return fatal;
    }
    return null;
  }

  /**
   * A bulk kind's units as one call in one savepoint. Synchronous, so none of them can be
   * cancelled meanwhile: rolled back ('alone'), they are still queued, each to run alone.
   */
  private runBulk(jobs: Job[], done: Done[]): BulkEnd {
    const kind = jobs[0]!.bulk!.kind;
    if (this.observer) for (const job of jobs) job.observed?.started(performance.now());
    let values: unknown[];
    try {
      this.control.openUnit();
      values = kind.run(jobs.map((j) => j.bulk!.item));
      if (values.length !== jobs.length) throw new Error(`a bulk run answered ${values.length} values for ${jobs.length} units`);
      this.control.release.run();
    } catch (err) {
      const fatal = this.control.undoUnit(err);
      if (fatal === null) return 'alone';
      for (const job of jobs) answered(job, done, false, fatal);
      return { fatal };
    }
    jobs.forEach((job, i) => answered(job, done, true, values[i]));
    this.stats.bulkUnits += jobs.length;
    return 'written';
  }

  /** One unit in its own savepoint; the error that ended the whole transaction, or null. */
  private async runUnit(job: Job, done: Done[]): Promise<unknown> {
    job.observed?.started(performance.now());
    try {
      this.control.openUnit();
    } catch (err) {
      done.push({ job, ok: false, value: err });
      return err; // no savepoint to undo: the batch cannot go on
    }
    try {
      const value = await job.run();
      this.control.release.run();
      done.push({ job, ok: true, value });
      return null;
    } catch (err) {
      done.push({ job, ok: false, value: err });
      return this.control.undoUnit(err);
    }
  }

  /** COMMIT, the log sync when a unit needs it, then every caller's answer. */
  private async finish(done: Done[], fatal: unknown): Promise<void> {
    if (fatal === null) {
      if (this.observer) committing(done);
      try {
        this.control.commit.run();
        this.stats.batches += 1;
        this.stats.units += done.length;
      } catch (err) {
        fatal = err;
      }
    }
    if (fatal !== null && this.raw.inTransaction) this.control.rollback.run();
    this.inBatch = false;
    if (fatal === null && done.some((d) => d.ok && d.job.durable)) {
      try {
        // Set in the same tick as COMMIT: no reader can run in between.
        this.syncing = this.sync();
        this.stats.syncs += 1;
        await this.syncing;
      } catch (err) {
        // Committed but perhaps not durable: nobody may be told it is. The data stays visible,
        // so this process must not go on as if nothing happened.
        fatal = err;
      } finally {
        this.syncing = null;
      }
    }
    const end = this.observer ? performance.now() : 0;
    for (const d of done) {
      d.job.observed?.ended(end, fatal === null && d.ok);
      if (fatal !== null && d.ok) d.job.reject(fatal);
      else if (d.ok) d.job.resolve(d.value);
      else d.job.reject(d.value);
    }
  }
}

/** Tells the observer that the batch's units reach their COMMIT. */
function committing(done: readonly Done[]): void {
  const at = performance.now();
  for (const d of done) d.job.observed?.committing(at);
}

/** A bulk call's unit, started and done: answered with the batch. */
function answered(job: Job, done: Done[], ok: boolean, value: unknown): void {
  job.state = 'started';
  done.push({ job, ok, value });
}

/** Runs a job alone and answers its caller. */
async function settle(job: Job): Promise<void> {
  try {
    job.resolve(await job.run());
  } catch (err) {
    job.reject(err);
  }
}

/** Cancels the job when `signal` aborts while it is still queued; the listener goes once it settles. */
function watch(job: Job, signal: AbortSignal): void {
  const onAbort = (): void => {
    if (job.state !== 'queued') return; // started: it runs to its end
    job.state = 'cancelled';
    job.reject(new CallCancelled());
  };
  const { resolve, reject } = job;
  const done = (): void => signal.removeEventListener('abort', onAbort);
  job.resolve = (v) => (done(), resolve(v));
  job.reject = (e) => (done(), reject(e));
  signal.addEventListener('abort', onAbort, { once: true });
}
