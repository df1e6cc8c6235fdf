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
// for its answer any more: the request's deadline passed, its client went away), it leaves
// the queue and is never started; its caller hears CallCancelled (nothing written). Once
// started it runs to its end with its batch.
import type Database from 'better-sqlite3';
import { CallCancelled } from '../../domain/store-errors.ts';
import type { ObservedUnit, UnitObserver } from '../unit-observer.ts';

interface Job {
  /** Runs inside the open batch (transactional) or alone on the connection. */
  run(): Promise<unknown>;
  transactional: boolean;
  /** Its caller is answered only after the log sync. */
  durable: boolean;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  /** Followed by the observer (tracing on). */
  observed: ObservedUnit<unknown> | undefined;
}

interface Done {
  job: Job;
  ok: boolean;
  value: unknown;
}

export class GroupCommitter {
  private readonly queue: Job[] = [];
  /** Batches committed and units of work run, for diagnostics and benchmarks. */
  readonly stats = { batches: 0, units: 0, syncs: 0 };
  private draining: Promise<void> | null = null;
  /** The sync of the last commit while it runs: what a reader saw may not be durable before it ends. */
  private syncing: Promise<void> | null = null;
  /** Hears each unit's wait and commit (tracing: observability/tracing/); null, nothing is called. */
  observer: UnitObserver | null = null;

  constructor(
    private readonly raw: Database.Database,
    private readonly maxBatch = 128,
    /** Makes the last commit durable; default nothing (the connection syncs in COMMIT). */
    private readonly sync: () => Promise<void> = async () => undefined,
  ) {}

  /** Queues work; resolves with its value after the batch that ran it has committed. */
  submit<T>(run: () => Promise<T> | T, transactional = true, durable = true, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(new CallCancelled());
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        const queued = this.queue.indexOf(job);
        if (queued < 0) return; // started: it runs to its end
        this.queue.splice(queued, 1);
        reject(new CallCancelled());
      };
      const done = (): void => signal?.removeEventListener('abort', onAbort);
      const observed = this.observer?.queued(run);
      const call = observed?.run ?? run;
      const job: Job = {
        observed,
        run: async () => call(),
        transactional,
        durable,
        resolve: (v) => {
          done();
          resolve(v as T);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
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

  /** Resolves once everything queued so far has settled. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Yield one turn of the event loop so that requests that arrived meanwhile (while the
      // last commit's fsync blocked the loop) queue their work and join this batch.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const head = this.queue[0];
      if (head === undefined) {
        // Checked and cleared in the same tick as submit() looks at it: no job is left behind.
        this.draining = null;
        return;
      }
      if (!head.transactional) {
        this.queue.shift();
        await head.run().then(head.resolve, head.reject);
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

  private async batch(): Promise<void> {
    const done: Done[] = [];
    let fatal: unknown = null;
    let n = 0;
    while (this.queue.length > 0 && this.queue[0]!.transactional && n < this.maxBatch) {
      const job = this.queue.shift()!;
      n += 1;
      this.raw.exec('SAVEPOINT unit');
      job.observed?.started(performance.now());
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
    if (this.observer) this.committing(done);
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

  private committing(done: readonly Done[]): void {
    const at = performance.now();
    for (const d of done) d.job.observed?.committing(at);
  }
}
