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
// without blocking every request and every webhook send for the fsync.
//
// Pipelined: while one sync runs, the next batch already executes and commits (the event loop
// would otherwise sit idle for the fsync: about a third of a payout's time here). One sync runs
// at a time; when it ends, the next one covers every commit made meanwhile (the WAL is one
// file, synced up to its end). The rule that keeps this safe: nobody is answered, and nothing
// a unit returns is released, before every commit up to its own is durable. A unit of the next
// batch may read rows of a commit whose sync is still running, but its caller waits for that
// sync too, so no answer, claim or webhook ever rests on a write a crash could take back. A
// failed sync fails everything committed after the last good one, and the committer refuses
// all later work: what the disk holds is unknown, so this process must not go on.
//
// A unit may be submitted as not needing the sync (`durable = false`): the delivery queue's
// claims. Such a unit starts no sync of its own, but still waits for the syncs of the commits
// before it (it may have leased a delivery whose insert is not yet durable). Losing a claim to
// a power cut only loses a lease: the delivery is due again and sent again, which
// at-least-once allows; a kill -9 loses nothing that was committed (the frames are in the OS).
import type Database from 'better-sqlite3';

interface Job {
  /** Runs inside the open batch (transactional) or alone on the connection. */
  run(): Promise<unknown>;
  transactional: boolean;
  /** Its caller is answered only after the log sync. */
  durable: boolean;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Done {
  job: Job;
  ok: boolean;
  value: unknown;
}

/** Someone waiting until the commits up to `target` are synced. */
interface Waiter {
  target: number;
  resolve(): void;
  reject(err: unknown): void;
}

export class GroupCommitter {
  private readonly queue: Job[] = [];
  /** Batches committed and units of work run, for diagnostics and benchmarks. */
  readonly stats = { batches: 0, units: 0, syncs: 0 };
  private draining: Promise<void> | null = null;
  /** Commits made (numbered from 1), the last one that needs a sync, and the last one synced. */
  private committed = 0;
  private needsSync = 0;
  private synced = 0;
  /** The sync in flight, if any. */
  private syncing: Promise<void> | null = null;
  private readonly waiters: Waiter[] = [];
  /** Set when a sync failed: nothing committed since may be acknowledged, and no new work runs. */
  private failure: { error: unknown } | null = null;

  constructor(
    private readonly raw: Database.Database,
    private readonly maxBatch = 128,
    /** Makes the last commit durable; default nothing (the connection syncs in COMMIT). */
    private readonly sync: () => Promise<void> = async () => undefined,
  ) {}

  /** Queues work; resolves with its value after the batch that ran it has committed and is durable. */
  submit<T>(run: () => Promise<T> | T, transactional = true, durable = true): Promise<T> {
    if (this.failure !== null) return Promise.reject(this.failure.error);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: async () => run(), transactional, durable, resolve: resolve as (v: unknown) => void, reject });
      this.draining ??= this.drain();
    });
  }

  /**
   * Resolves once every commit made so far is durable. A read on another connection sees a
   * commit as soon as it is made, before its sync; the store answers such a read only after
   * this, so nobody is shown what a crash could still take back.
   */
  durable(): Promise<void> {
    return this.durableUpTo(this.committed);
  }

  /** Resolves once everything queued so far has settled. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
    while (this.syncing) await this.syncing.catch(() => undefined);
  }

  /** Resolves once `commit` (the latest so far, or one being answered now) is durable. */
  private durableUpTo(commit: number): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure.error);
    // A commit that needs no sync of its own is durable once the last one before it that did is.
    const target = Math.min(commit, this.needsSync);
    if (target <= this.synced) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ target, resolve, reject });
      this.startSync();
    });
  }

  /** Starts one sync covering every commit so far, unless one is running (it starts the next). */
  private startSync(): void {
    if (this.syncing !== null || this.failure !== null || this.needsSync <= this.synced) return;
    const upTo = this.committed;
    this.stats.syncs += 1;
    this.syncing = this.sync().then(
      () => {
        this.synced = upTo;
        this.syncing = null;
        // In commit order: waiters were added in that order.
        const still = this.waiters.filter((w) => w.target > this.synced);
        const now = this.waiters.filter((w) => w.target <= this.synced);
        this.waiters.splice(0, this.waiters.length, ...still);
        for (const w of now) w.resolve();
        this.startSync();
      },
      (error: unknown) => {
        // Committed but perhaps not durable: nobody may be told it is. The data stays visible,
        // so this process must not go on as if nothing happened.
        this.failure = { error };
        this.syncing = null;
        for (const w of this.waiters.splice(0)) w.reject(error);
        for (const job of this.queue.splice(0)) job.reject(error);
      },
    );
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Yield one turn of the event loop so that requests that arrived meanwhile queue their
      // work and join this batch.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const head = this.queue[0];
      if (head === undefined || this.failure !== null) {
        // Checked and cleared in the same tick as submit() looks at it: no job is left behind.
        this.draining = null;
        return;
      }
      if (!head.transactional) {
        this.queue.shift();
        // Alone on the connection: it may read commits whose sync is still running.
        await head.run().then(
          (value) => this.answer([{ job: head, ok: true, value }], this.committed),
          (err: unknown) => head.reject(err),
        );
        continue;
      }
      try {
        this.raw.exec('BEGIN IMMEDIATE');
      } catch (err) {
        // Could not start a transaction (e.g. another process held the lock past busy_timeout).
        this.queue.shift();
        head.reject(err);
        continue;
      }
      await this.batch();
    }
  }

  /** Answers units once the commits up to `commit` are durable (failed units at once). */
  private answer(done: Done[], commit: number): void {
    const failed = done.filter((d) => !d.ok);
    for (const d of failed) d.job.reject(d.value);
    const ok = done.filter((d) => d.ok);
    if (ok.length === 0) return;
    this.durableUpTo(commit).then(
      () => {
        for (const d of ok) d.job.resolve(d.value);
      },
      (err: unknown) => {
        for (const d of ok) d.job.reject(err);
      },
    );
  }

  private async batch(): Promise<void> {
    const done: Done[] = [];
    let fatal: unknown = null;
    let n = 0;
    while (this.queue.length > 0 && this.queue[0]!.transactional && n < this.maxBatch) {
      const job = this.queue.shift()!;
      n += 1;
      this.raw.exec('SAVEPOINT unit');
      try {
        const value = await job.run();
        this.raw.exec('RELEASE unit');
        done.push({ job, ok: true, value });
      } catch (err) {
        if (!this.raw.inTransaction) {
          // The error ended the whole transaction (disk full, I/O error): nothing of the batch stands.
          fatal = err;
          done.push({ job, ok: false, value: err });
          break;
        }
        this.raw.exec('ROLLBACK TO unit');
        this.raw.exec('RELEASE unit');
        done.push({ job, ok: false, value: err });
      }
    }
    if (fatal === null) {
      try {
        this.raw.exec('COMMIT');
        this.stats.batches += 1;
        this.stats.units += done.length;
      } catch (err) {
        fatal = err;
        if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
      }
    }
    if (fatal !== null) {
      for (const d of done) d.job.reject(d.ok ? fatal : d.value);
      return;
    }
    this.committed += 1;
    if (done.some((d) => d.ok && d.job.durable)) this.needsSync = this.committed;
    this.answer(done, this.committed);
  }
}
