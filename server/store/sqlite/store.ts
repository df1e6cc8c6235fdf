// The embedded Store: one SQLite file through better-sqlite3. better-sqlite3 is synchronous
// and writes through one connection, while our transactions are async functions; so
// transactions (and queue operations) run one at a time, each in its own SAVEPOINT inside a
// group-committed batch (group-commit.ts), and nothing else touches that connection
// meanwhile. Keep transaction bodies short (no network I/O inside): while one is open every
// other write waits. Store.read uses a second, read-only connection (WAL). The repositories
// are the shared ones (../repos/) over sql.ts. One SqliteStore per database file per process.
import { closeSync, fdatasync, fstatSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { DeliveryListeners, readView, SerialTxViews, TxScope } from '../tx.ts';
import type { CallOptions, DeliveryQueue, OrderCreated, OrderCreation, PayoutCreated, PayoutCreation, PruneRequest, PruneResult, ReadTx, Store, Tx } from '../../domain/store.ts';
import { CallCancelled } from '../../domain/store-errors.ts';
import { pruneBatch } from '../retention.ts';
import { createOrderIn, keyTakenMeanwhile } from '../create-order.ts';
import { createPayoutIn, walletShortAnswer } from '../create-payout.ts';
import { nestingGuard, type NestingGuard } from '../nesting-guard.ts';
import { Db } from './db.ts';
import { GroupCommitter, type Bulk, type UnitOptions } from './group-commit.ts';
import { sqliteBulkOrders, type BulkOrder } from './bulk-orders.ts';
import { sqliteBulkPayouts, type BulkPayout } from './bulk-payouts.ts';
import { assertKnownSchema, migrate } from './migrate.ts';
import * as queue from './queue.ts';

import { sqlitePrune } from './prune.ts';
import { sqliteHooks, sqliteSql } from './sql.ts';
import type { Bit } from './rows.ts';
import { TransactionVersions } from './versions.ts';

export interface SqliteStoreOptions {
  /** Path of the database file; ':memory:' for a private in-memory database (tests). */
  file: string;
  /** Milliseconds to wait for another process's write lock before failing (default 5000). */
  busyTimeoutMs?: number;
  /** Refuse a store call made inside a transaction (default on; see nesting-guard.ts). */
  guardNesting?: boolean;
  /** Told of every statement the writing connection runs, for tests that count them. */
  onStatement?: (text: string) => void;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly queue: DeliveryQueue;
  private readonly db: Db;
  /** Repositories over the read-only connection (null in memory: one connection only). */
  private readonly reads: ReadTx | null;
  private readonly reader: Database.Database | null;
  readonly committer: GroupCommitter;
  private readonly nesting: NestingGuard;
  private readonly listeners = new DeliveryListeners((err, what) => console.error(what, err));
  private closed = false;
  private readonly wal: WalSync | null;
  private readonly versions: TransactionVersions;
  private readonly bulkOrders: Bulk<BulkOrder, OrderCreated>;
  private readonly bulkPayouts: Bulk<BulkPayout, PayoutCreated>;
  /** Each transaction's Tx on the writing connection, whose transactions run one at a time. */
  private readonly txViews: SerialTxViews<Bit, string>;
  /** In memory: the repositories reads use between batches on the one connection. */
  private readonly between: ReadTx;

  /**
   * `reader`: a read-only connection to the same file (WAL), so reads never queue behind a batch.
   * `sync`: the log sync after each commit (see openSqliteStore); absent in memory.
   */
  constructor(raw: Database.Database, reader: Database.Database | null = null, sync?: WalSync, guardNesting = true) {
    // A statement of a unit that went on after SQLite ended its batch's transaction is refused.
    this.db = new Db(raw, () => this.committer.assertInTransaction());
    this.nesting = nestingGuard(guardNesting);
    this.reader = reader;
    this.reads = reader ? view(new Db(reader)) : null;
    this.txViews = new SerialTxViews(sqliteSql(this.db), sqliteHooks(this.db));
    this.between = view(this.db);
    this.wal = sync ?? null;
    this.committer = new GroupCommitter(raw, 128, sync ? () => sync.sync() : undefined);
    this.versions = new TransactionVersions(raw);
    this.bulkOrders = sqliteBulkOrders(this.db);
    this.bulkPayouts = sqliteBulkPayouts(this.db);
    this.queue = {
      // A claim needs no log sync of its own (group-commit.ts): a lost lease means a resend.
      claim: (o) => this.exclusive(() => queue.claim(this.db, o), { durable: false }),
      // One unit of the group commit: the batch's attempts share one fsync, and the claim runs
      // after the completions in the same transaction (so it sees the leases they free).
      completeAndClaim: (owner, completions, claim) => this.exclusive(() => queue.completeAndClaim(this.db, owner, completions, claim)),
      release: async (owner, ids) => {
        const released = await this.exclusive(() => queue.release(this.db, owner, ids));
        if (released > 0) this.listeners.wake();
      },
      pause: (destination, until) => this.exclusive(() => queue.pause(this.db, destination, until)),
      releaseOrphaned: async () => {
        const released = await this.exclusive(() => queue.releaseAll(this.db));
        if (released > 0) this.listeners.wake();
        return released;
      },
      nextDueAt: () => this.exclusive(() => queue.nextDueAt(this.db), { transactional: false }),
      stats: (now) => this.exclusive(() => queue.stats(this.db, now), { transactional: false }),
    };
  }

  /** A connection setting, for diagnostics and tests (e.g. 'journal_mode'). */
  pragma(name: string): unknown {
    return this.db.raw.pragma(name, { simple: true });
  }

  async migrate(): Promise<void> {
    await this.exclusive(() => migrate(this.db.raw), { transactional: false });
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: CallOptions): Promise<T> {
    this.assertUsable();
    const scope = new TxScope();
    // Resolves only after the batch holding this unit of work has committed.
    return this.settled(scope, this.committer.submit(() => this.unit(scope, fn), { signal: opts?.signal }));
  }

  /** The batch's new orders go together (bulk-orders.ts); alone, as an ordinary transaction's unit. */
  createOrder(c: OrderCreation, opts?: CallOptions): Promise<OrderCreated> {
    return this.bulkUnit(this.bulkOrders, c, (tx) => createOrderIn(tx, c), opts).catch(keyTakenMeanwhile);
  }

  /** The batch's new payouts go together (bulk-payouts.ts); alone, as an ordinary transaction's unit. */
  createPayout(c: PayoutCreation, opts?: CallOptions): Promise<PayoutCreated> {
    return this.bulkUnit(this.bulkPayouts, c, (tx) => createPayoutIn(tx, c), opts).catch(walletShortAnswer);
  }

  /** A unit of `kind`'s bulk write for the batch, or `alone` in a transaction's unit should that fail; settled after the commit. */
  private bulkUnit<C, T>(kind: Bulk<{ creation: C; scope: TxScope }, T>, creation: C, alone: (tx: Tx) => Promise<T>, opts?: CallOptions): Promise<T> {
    try {
      this.assertUsable();
    } catch (err) {
      return Promise.reject(err);
    }
    const scope = new TxScope();
    return this.settled(scope, this.committer.submitBulk(kind, { creation, scope }, () => this.unit(scope, alone), opts?.signal));
  }

  /** A transaction's body on the writing connection, its Tx closed once it returns. */
  private async unit<T>(scope: TxScope, fn: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.nesting.run(scope, () => fn(this.createTx(scope)));
    } finally {
      scope.open = false;
    }
  }

  /** After the batch: versions moved, then (committed) the unit's callbacks and wake-ups. */
  private async settled<T>(scope: TxScope, committed: Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await committed;
    } finally {
      // Before the caller hears of the commit, and before any callback of it runs. On failure
      // too: a batch whose log sync failed is committed and visible all the same, and a
      // version moved for a rollback costs no more than one read.
      if (scope.touched) this.versions.committed(scope.touched);
    }
    scope.committed(this.listeners);
    return result;
  }

  transactionsVersion(environmentId: string): string {
    // Synchronous and waits for nothing: safe inside a transaction too.
    if (this.closed) throw new Error('store is closed');
    return this.versions.of(environmentId);
  }

  async read<T>(fn: (tx: ReadTx) => Promise<T>, opts?: CallOptions): Promise<T> {
    this.assertUsable();
    if (opts?.signal?.aborted) throw new CallCancelled();
    // Each statement on the reader sees the last commit; the writer's open batch is invisible
    // to it, so nothing uncommitted is ever answered.
    if (this.reads !== null) {
      const value = await fn(this.reads);
      // The reader sees a commit before its log sync ends: answer only once it is durable.
      await this.committer.durable();
      return value;
    }
    // In memory there is one connection: read between batches, never inside one.
    return this.committer.submit(() => fn(this.between), { transactional: false, signal: opts?.signal });
  }

  onDeliveriesReady(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  onEventsRecorded(listener: (environmentId: string) => void): () => void {
    return this.listeners.addEvents(listener);
  }

  /** One unit of the group commit (retention.ts), like a short transaction. */
  prune(req: PruneRequest): Promise<PruneResult> {
    try {
      this.assertUsable();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.committer
      .submit(() => pruneBatch(sqliteSql(this.db), sqlitePrune, req))
      .then(({ result }) => result); // the round-robin's place is in the database (prune_cursor)
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.committer.idle();
    this.listeners.clear();
    this.reader?.close();
    this.db.raw.close();
    this.wal?.close();
  }

  private createTx(scope: TxScope): Tx {
    return this.txViews.view(scope);
  }

  /** Runs a synchronous operation alone on the connection, in one IMMEDIATE transaction by default. */
  private exclusive<T>(op: () => T, how?: UnitOptions): Promise<T> {
    try {
      this.assertUsable();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.committer.submit(op, how);
  }

  private assertUsable(): void {
    if (this.closed) throw new Error('store is closed');
    // Waiting for the group committer from inside a transaction would wait for ourselves forever.
    this.nesting.check();
  }
}

function view(db: Db): ReadTx {
  return readView(sqliteSql(db), sqliteHooks(db));
}

/**
 * fdatasync of the -wal file, off the event loop. With synchronous = NORMAL a WAL commit writes
 * its frames without syncing them; syncing the -wal file afterwards is exactly the sync that
 * synchronous = FULL does at the end of COMMIT. The file is reopened if SQLite ever replaced it.
 */
class WalSync {
  private fd: number | null = null;

  constructor(private readonly path: string) {}

  sync(): Promise<void> {
    const fd = this.current();
    if (fd === null) return Promise.resolve(); // no log yet: nothing was written
    return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  }

  private current(): number | null {
    let ino: number;
    try {
      ino = statSync(this.path).ino;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    if (this.fd !== null && fstatSync(this.fd).ino === ino) return this.fd;
    this.close();
    this.fd = openSync(this.path, 'r+');
    return this.fd;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

export async function openSqliteStore(opts: SqliteStoreOptions): Promise<SqliteStore> {
  if (opts.file !== ':memory:') mkdirSync(dirname(opts.file), { recursive: true });
  const raw = new Database(opts.file, opts.onStatement ? { verbose: (text) => opts.onStatement?.(String(text)) } : {});
  try {
    // WAL: readers never block the writer and commits append to the log.
    raw.pragma('journal_mode = WAL');
    // In WAL mode NORMAL skips the fsync of the log at each commit, so on its own a power
    // loss or OS crash could drop the last acknowledged transactions (a payout we answered
    // 201 for, a debited wallet). The group committer syncs the log itself after every
    // commit, before anyone is answered (WalSync): the durability of FULL, with the fsync on
    // the thread pool instead of the event loop. In memory there is nothing to sync.
    const file = opts.file === ':memory:' ? null : raw.name;
    raw.pragma(file === null ? 'synchronous = FULL' : 'synchronous = NORMAL');
    raw.pragma('foreign_keys = ON');
    // Each unit of the group commit runs in a SAVEPOINT, whose journal keeps the first copy of
    // every page the unit changes. Past 64 KiB SQLite spills that journal to a temporary file:
    // an order (order, event and delivery rows and their dozen indexes) passed it, so every
    // order wrote about 35 pages to a file no one ever reads back (a crash discards an open
    // transaction; the WAL needs no undo). Kept in memory, it costs at most one unit's pages.
    // The setting also keeps sorts' temporary b-trees in memory; the store's sorts are small (a
    // page of a list, a claim's candidates; RSS 262 MB with 100 000 deliveries queued).
    raw.pragma('temp_store = MEMORY');
    raw.pragma(`busy_timeout = ${Math.max(0, Math.trunc(opts.busyTimeoutMs ?? 5000))}`);
    assertKnownSchema(raw);
  } catch (err) {
    raw.close();
    throw err;
  }
  const guard = opts.guardNesting ?? true;
  if (opts.file === ':memory:') return new SqliteStore(raw, null, undefined, guard);
  // WAL lets this connection read the last committed state while the writer's batch is open.
  let reader: Database.Database | null = null;
  try {
    reader = new Database(opts.file, { readonly: true, fileMustExist: true });
    reader.pragma(`busy_timeout = ${Math.max(0, Math.trunc(opts.busyTimeoutMs ?? 5000))}`);
    return new SqliteStore(raw, reader, new WalSync(`${raw.name}-wal`), guard);
  } catch (err) {
    reader?.close();
    raw.close();
    throw err;
  }
}
