// Store.transactionsVersion for SQLite: a counter per environment, moved when a transaction
// that changed the environment's transactions has committed (and its log is synced), before
// its caller is answered; and an epoch, moved when another process has committed to the file.
// `PRAGMA data_version` on the writing connection changes exactly then: it counts the commits
// of other connections, and this process's only other connection (the reader) never writes.
// Asking costs a read transaction (≈ 10 µs, as much as the rest of a cached answer), so it is
// asked at most every EXTERNAL_CHECK_MS: another process's commit (the admin tool's; the
// server writes every transaction itself) moves the epoch within that bound.
import type Database from 'better-sqlite3';

/** How soon a commit by another process moves every version. */
export const EXTERNAL_CHECK_MS = 100;

export class TransactionVersions {
  private readonly counters = new Map<string, number>();
  private readonly dataVersion: Database.Statement;
  private seen: number;
  private epoch = 0;
  private checkedAt: number;

  /** `now`: a monotonic clock in milliseconds; it only spaces the checks, nothing waits on it. */
  constructor(
    writer: Database.Database,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.dataVersion = writer.prepare('PRAGMA data_version').pluck();
    this.seen = this.dataVersion.get() as number;
    this.checkedAt = now();
  }

  /** After the commit of a transaction that changed these environments' transactions. */
  committed(environments: Iterable<string>): void {
    for (const id of environments) this.counters.set(id, (this.counters.get(id) ?? 0) + 1);
  }

  of(environmentId: string): string {
    const at = this.now();
    if (at - this.checkedAt >= EXTERNAL_CHECK_MS) {
      this.checkedAt = at;
      const seen = this.dataVersion.get() as number;
      if (seen !== this.seen) {
        // Another process committed: it may have changed anything.
        this.seen = seen;
        this.epoch += 1;
      }
    }
    return `${this.epoch}.${this.counters.get(environmentId) ?? 0}`;
  }
}
