// Store.transactionsVersion for PostgreSQL, where any number of instances commit to the same
// database: a counter per environment, moved before a writer of this instance is answered
// (and after a batch whose commit failed: it may have committed all the same), and moved when
// another instance's NOTIFY transactions_changed reaches this instance's listener. An instance
// sends it once its batch has committed and before it answers the batch's writers
// (group-commit.ts).
//
// The staleness bound: notifications reach a listener in commit order, so once a heartbeat
// this instance sent at time T comes back, every write acknowledged (anywhere) before T has
// been heard. A version is given only while the last heartbeat heard was sent at most
// STALENESS_MS ago; otherwise (listener down, database slow) the answer is null and nothing
// is cached or answered from the cache. So a cached answer misses at most the writes
// acknowledged by other instances in the last STALENESS_MS; this instance's own, none.
// A lost listener connection moves the epoch: notifications sent meanwhile are lost.
//
// Two writes are never told: one whose instance died between its commit and its
// notification (its writer was never answered), and one whose notification failed (logged).
// For them, versions also move every MAX_AGE_MS: no page is answered from a cache for longer.
/** How old the newest proof of having heard every other instance's writes may be. */
export const STALENESS_MS = 100;
/** How long a page is answered at most, told of its changes or not (see above). */
export const MAX_AGE_MS = 1000;
/** How often a heartbeat goes out (one at a time). */
export const HEARTBEAT_MS = 20;

export class PgTransactionVersions {
  private readonly counters = new Map<string, number>();
  private epoch = 0;
  /** Every write acknowledged before this (local monotonic ms) has been heard. */
  private currentAsOf = Number.NEGATIVE_INFINITY;
  /** The heartbeat on its way, and when it was sent. */
  private pending: { id: number; sentAt: number } | null = null;
  private nextId = 0;
  private readonly waiters: Array<{ after: number; resolve(): void }> = [];

  /**
   * `stalenessMs`: STALENESS_MS; Infinity gives a version however long ago a heartbeat came
   * back (tests of one instance's own versions). `maxAgeMs`: MAX_AGE_MS (Infinity: never
   * moved by time alone). `now`: a monotonic clock in milliseconds.
   */
  constructor(
    private readonly stalenessMs = STALENESS_MS,
    private readonly maxAgeMs = MAX_AGE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A write of these environments committed (here, or heard from any instance). */
  committed(environments: Iterable<string>): void {
    for (const id of environments) this.counters.set(id, (this.counters.get(id) ?? 0) + 1);
  }

  /** The version of the environment's transactions, or null while this instance may have missed writes. */
  of(environmentId: string): string | null {
    const now = this.now();
    if (now - this.currentAsOf > this.stalenessMs) return null;
    return `${this.epoch}.${Math.floor(now / this.maxAgeMs)}.${this.counters.get(environmentId) ?? 0}`;
  }

  /** The payload of a heartbeat to send now, or null while one is on its way. */
  heartbeat(): number | null {
    if (this.pending !== null) return null;
    this.pending = { id: this.nextId++, sentAt: this.now() };
    return this.pending.id;
  }

  /** This instance's heartbeat `id` came back: everything committed before it was sent has been heard. */
  heard(id: number): void {
    if (this.pending?.id !== id) return;
    this.currentAsOf = this.pending.sentAt;
    this.pending = null;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (this.currentAsOf >= w.after) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /** The listener lost its connection (or a heartbeat failed): notifications may have been missed. */
  lost(): void {
    this.epoch += 1;
    this.currentAsOf = Number.NEGATIVE_INFINITY;
    this.pending = null;
  }

  /** Resolves once every write acknowledged before now has been heard (tests, diagnostics). */
  caughtUp(): Promise<void> {
    const after = this.now();
    return new Promise((resolve) => this.waiters.push({ after, resolve }));
  }
}
