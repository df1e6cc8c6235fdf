// The shared Store: one PostgreSQL database behind any number of service instances, through a
// pg.Pool per instance. The domain transactions of an instance run group-committed
// (group-commit.ts): those arriving while one batch runs go together into the next database
// transaction at READ COMMITTED, a SAVEPOINT each, answered after its one durable COMMIT. So
// keep transaction bodies short (no network I/O inside): the next batch waits for this one's
// statements. The rules that must hold across instances are held by the database itself:
// unique constraints, guarded single-statement updates (wallet, lease holder), row locks, and
// advisory locks for migrating and claiming. Deadlocks and serialization failures run the
// transaction again (in a later batch), so a transaction body may run more than once: keep it free of effects
// outside the store (use afterCommit for those).
//
// Wake-ups: once a batch that adds or restarts due deliveries has committed, and before its
// callers are answered, it sends NOTIFY deliveries_ready (group-commit.ts says why not inside
// the batch); every instance LISTENs on a dedicated connection and wakes its listeners. An
// instance that dies between the two leaves the other instances to their 30 s safety net.
// Listeners of the committing instance are woken directly after commit, and skip the echo of
// their own notification.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { nestingGuard, type NestingGuard } from '../nesting-guard.ts';
import { DeliveryListeners, readView, transactionView, TxScope } from '../tx.ts';
import type { CallOptions, ClaimOptions, DeliveryQueue, OrderCreated, OrderCreation, PayoutCreated, PayoutCreation, PruneRequest, PruneResult, ReadTx, Store, Tx } from '../../domain/store.ts';
import { CallCancelled, OVERLOADED } from '../../domain/store-errors.ts';
import { createOrderIn, keyTakenMeanwhile } from '../create-order.ts';
import { createPayoutIn, walletShortAnswer } from '../create-payout.ts';
import { Conn, mapError, typeParsers } from './db.ts';
import { DEFAULT_DEADLINES, deadlineClient, queryDeadlineMs, sessionSettings, type OnClientError, type PgDeadlines } from './deadlines.ts';
import { allClients, assertPgInternals, destroyConnection, idleClients } from './pg-internals.ts';
import { realTimers, type Timers } from '../../timers.ts';
import { PgGroupCommitter, type Attempt, type BulkStatement } from './group-commit.ts';
import { bulkOrders } from './bulk-orders.ts';
import { assertKnownSchema, migrate } from './migrate.ts';
import * as queue from './queue.ts';
import { prune } from './prune.ts';

import { OrderNumbers } from './order-numbers.ts';
import { postgresHooks, postgresSql } from './sql.ts';
import { HEARTBEAT_MS, PgTransactionVersions } from './versions.ts';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:5432/database (any libpq-style URL node-postgres accepts). */
  connectionString: string;
  /** Connections in this instance's pool (default 20, DATABASE_POOL_SIZE): reads, and one per batch executing or committing (at most 5). */
  poolSize?: number;
  log?: Logger;
  /** Refuse a store call made inside a transaction (default on; see nesting-guard.ts). */
  guardNesting?: boolean;
  /** The staleness bound of transactionsVersion (versions.ts; default STALENESS_MS). */
  transactionsStalenessMs?: number;
  /** How often transactionsVersion moves by time alone (versions.ts; default MAX_AGE_MS). */
  transactionsMaxAgeMs?: number;
  /** What the listener's heartbeats and reconnects, the group commit's retries and every deadline wait with (default: real timers). */
  timers?: Timers;
  /** What the deadlines wait with (default: real timers; apart from `timers`, so a test's fake heartbeats fire no deadline). */
  deadlineTimers?: Timers;
  /** Deadlines of every wait for the database (deadlines.ts; defaults DEFAULT_DEADLINES). */
  deadlines?: Partial<PgDeadlines>;
  /** Store calls waiting for the database at most; more are refused at once, 503 (default 1 024). */
  maxQueued?: number;
  /** Told of every statement sent on the main pool (the API's and the pruner's), for tests that count them. */
  onStatement?: (text: string) => void;
}

/** What the operator sees of the store's connections (metrics). */
export interface ConnectionStats {
  /** Connections destroyed because a query or a batch missed its deadline. */
  destroyed: number;
  /** Store calls refused by admission control. */
  refused: number;
  /** Errors a connection's own 'error' handler took in (each logged at debug). */
  clientErrors: number;
  /** The notification listener is connected. */
  listening: boolean;
}

export const DELIVERIES_CHANNEL = 'deliveries_ready';
/** `<instance> <environment>…`: whose transactions a batch changed; and heartbeats `hb <instance> <n>` (versions.ts). */
export const TRANSACTIONS_CHANNEL = 'transactions_changed';
/** How often a transaction hit by a deadlock or serialization failure is run in all. */
const MAX_TRANSACTION_RUNS = 4;
const APPLICATION_NAME = 'payments-service';


/** A transaction's calls run one after another on its one connection. */
class SerialTxScope extends TxScope {
  private tail: Promise<unknown> = Promise.resolve();

  protected override run<T>(op: () => Promise<T>): Promise<T> {
    const result = this.tail.then(op);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every call made so far has settled. */
  async idle(): Promise<void> {
    for (let seen = this.tail; ; seen = this.tail) {
      await seen;
      if (seen === this.tail) return;
    }
  }
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly queue: DeliveryQueue;
  /** Tags this instance's notifications so its own listener can skip the echo. */
  private readonly instanceId = randomUUID();
  private readonly nesting: NestingGuard;
  private readonly listeners: DeliveryListeners;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly notifications: NotificationListener;
  /** Store.transactionsVersion: moved by this instance's commits and every instance's notifications. */
  private readonly versions: PgTransactionVersions;
  /**
   * Order numbers are taken outside the caller's transaction, on their own small pool, so the
   * sequence row is locked for one statement rather than a whole transaction (which would
   * serialise every order of an environment). A rolled-back order leaves a gap in the numbers.
   * A separate pool, so that a transaction waiting for a number never waits for its own pool.
   */
  private readonly sequences: Conn;
  /** Order numbers reserved in blocks on `sequences` (order-numbers.ts). */
  private readonly orderNumbers: OrderNumbers;
  /** Repositories on the pool: each read is one statement, no BEGIN/COMMIT around it. */
  private readonly reads: ReadTx;
  /** The same on one connection, for the reads a caller may give up (readWhileWanted). */
  private readonly clientViews = new WeakMap<pg.PoolClient, ReadTx>();
  /** Runs the transactions of this instance in group-committed batches. */
  readonly committer: PgGroupCommitter;
  /** How a batch writes the new orders it holds (createOrder). */
  private readonly orders: BulkStatement<OrderCreation, OrderCreated>;
  private closed = false;
  /** Counts for connectionStats(); `destroyed` is moved by every pool's clients. */
  readonly counts: StoreCounts = { destroyed: 0, refused: 0, clientErrors: 0 };
  private readonly maxQueued: number;
  /** Each owner's lease ends, strictly increasing: what releaseLostClaim names a claim by. */
  private readonly leaseEnds = new queue.LeaseEnds();
  private readonly deadlines: PgDeadlines;
  private readonly deadlineTimers: Timers;

  constructor(
    private readonly pool: pg.Pool,
    connectionString: string,
    private readonly log: Logger,
    private readonly sequencePool: pg.Pool,
    /**
     * The delivery queue's own connections: claims and completion batches never wait in the
     * pool's queue behind the API's transactions (under load that wait was most of an
     * event's time to delivery), and the API never waits behind the queue.
     */
    private readonly queuePool: pg.Pool,
    /** Sends the notifications of committed batches (group-commit.ts: notify), without waiting for a flush. */
    private readonly notifierPool: pg.Pool,
    guardNesting = true,
    bounds: { stalenessMs?: number; maxAgeMs?: number } = {},
    private readonly timers: Timers = realTimers,
    limits: { deadlines?: PgDeadlines; maxQueued?: number; counts?: StoreCounts; deadlineTimers?: Timers; Client?: typeof pg.Client; onDeadlineMissed?: () => void } = {},
  ) {
    this.deadlineTimers = limits.deadlineTimers ?? realTimers;
    this.deadlines = limits.deadlines ?? DEFAULT_DEADLINES;
    this.maxQueued = limits.maxQueued ?? 1_024;
    if (limits.counts) this.counts = limits.counts;
    this.versions = new PgTransactionVersions(bounds.stalenessMs, bounds.maxAgeMs);
    this.nesting = nestingGuard(guardNesting);
    this.listeners = new DeliveryListeners((err, what) => log.error({ err }, what));
    this.sequences = new Conn(sequencePool);
    this.orderNumbers = new OrderNumbers(this.sequences);
    this.orders = bulkOrders(this.orderNumbers, this.listeners);
    const onPool = new Conn(pool);
    this.reads = readView(postgresSql(onPool), postgresHooks(onPool, this.orderNumbers));
    this.committer = new PgGroupCommitter(pool, {
      maxRuns: MAX_TRANSACTION_RUNS,
      timers,
      deadlineTimers: this.deadlineTimers,
      transactionMs: this.deadlines.transactionMs,
      queueWaitMs: this.deadlines.connectMs,
      maxQueued: this.maxQueued,
      onDestroyed:
        limits.onDeadlineMissed ??
        (() => {
          this.counts.destroyed += 1;
        }),
      notify: (deliveries, changed) =>
        notifierPool.query('SELECT CASE WHEN $5::boolean THEN pg_notify($1, $2) END, CASE WHEN $6::boolean THEN pg_notify($3, $4) END', [
          DELIVERIES_CHANNEL,
          this.instanceId,
          TRANSACTIONS_CHANNEL,
          [this.instanceId, ...changed].join(' '),
          deliveries,
          changed.size > 0,
        ]),
      log,
    });
    for (const p of [sequencePool, queuePool, notifierPool]) {
      p.on('error', (err) => {
        if (!this.closed) log.warn({ err: brief(err) }, 'idle PostgreSQL connection failed');
      });
    }
    // An idle pooled connection that dies (database restart, network) must not crash the
    // process; the pool drops it and opens a new one when needed. After close() the pool's
    // connections may still be going away: nothing to report then.
    pool.on('error', (err) => {
      if (!this.closed) log.warn({ err: brief(err) }, 'idle PostgreSQL connection failed');
    });
    // A checked-out connection that dies between two queries (database restarted in the middle
    // of a transaction) emits 'error' on the client, which would crash the process without a
    // listener; its next query fails and the caller gets the error (503 store-unavailable).
    for (const p of [pool, sequencePool, queuePool]) {
      p.on('connect', (client) => {
        client.on('error', (err) => {
          if (!this.closed) log.warn({ err: brief(err) }, 'PostgreSQL connection in use failed');
        });
      });
    }
    this.notifications = new NotificationListener(
      { connectionString, ...sessionSettings(this.deadlines), Client: limits.Client ?? deadlineClient(this.deadlineTimers, queryDeadlineMs(this.deadlines), () => (this.counts.destroyed += 1), countClientErrors(this.counts, log)) },
      this.instanceId,
      () => this.listeners.wake(),
      this.versions,
      log,
      timers,
    );
    this.queue = {
      claim: (o) => this.track(() => queue.claim(this.queuePool, o, this.leaseEnds, this.lostClaim)),
      completeAndClaim: (owner, completions, claim) => this.track(() => queue.completeAndClaim(this.queuePool, owner, completions, claim, this.leaseEnds, this.lostClaim)),
      release: (owner, ids) =>
        this.track(async () => {
          if ((await queue.release(this.queuePool, owner, ids)) === 0) return;
          this.listeners.wake();
          // Other instances' workers may be waiting on these destinations too.
          await new Conn(this.queuePool).run('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, this.instanceId]);
        }),
      pause: (destination, until) => this.track(() => queue.pause(this.queuePool, destination, until)),
      // Other instances may hold live leases: a dead instance's expire on their own.
      releaseOrphaned: () => Promise.resolve(0),
      nextDueAt: () => this.track(() => queue.nextDueAt(this.queuePool)),
      stats: (now) => this.track(() => queue.stats(this.pool, now)),
      reset: () => this.reset(),
    };
  }

  /** Starts listening for other instances' notifications. */
  async start(): Promise<void> {
    await assertKnownSchema(this.pool);
    // The schema's query left a connection in the pool to look at.
    assertPgInternals(this.pool);
    await this.notifications.start();
  }

  async migrate(): Promise<void> {
    await this.track(() => migrate(this.pool));
  }

  /**
   * Runs fn as one unit of the next group-committed batch (group-commit.ts): answered once the
   * batch's COMMIT is durable; after a deadlock or serialization failure fn runs again.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: CallOptions): Promise<T> {
    const unit = this.unitOf(fn);
    return this.track(() => this.committer.submit(unit.attempt, opts?.signal).catch(unit.failed));
  }

  /**
   * A unit of the next batch too, but written with the batch's other new orders in one
   * statement (bulk-orders.ts); alone, as createOrderIn, if that statement fails.
   */
  createOrder(c: OrderCreation, opts?: CallOptions): Promise<OrderCreated> {
    const unit = this.unitOf((tx) => createOrderIn(tx, c));
    return this.track(() => this.committer.submitBulk(this.orders, c, unit.attempt, opts?.signal).catch(unit.failed)).catch(keyTakenMeanwhile);
  }

  /** A unit of the next batch: the insert and the debit are one statement already (sql.ts). */
  createPayout(c: PayoutCreation, opts?: CallOptions): Promise<PayoutCreated> {
    return this.transaction((tx) => createPayoutIn(tx, c), opts).catch(walletShortAnswer);
  }

  /** fn as the group commit runs it (each run on the batch's connection), and what a failure of it still moves. */
  private unitOf<T>(fn: (tx: Tx) => Promise<T>): { attempt: Attempt<T>; failed(err: unknown): never } {
    // The environments the last run changed: moved on failure too (a COMMIT whose answer was
    // lost may have gone in; a needless move costs one read).
    let touched: ReadonlySet<string> | null = null;
    const attempt: Attempt<T> = async (client) => {
      const scope = new SerialTxScope();
      try {
        const value = await this.nesting.run(scope, () => fn(this.createTx(new Conn(client), scope)));
        // A call fn started without awaiting still belongs to this unit.
        await scope.idle();
        scope.open = false;
        touched = scope.touched;
        const committed = (): void => {
          // Before the caller hears of the commit: its next read here never gets an older page.
          if (touched) this.versions.committed(touched);
          scope.committed(this.listeners);
        };
        return { value, notify: scope.deliveriesReady, touched, committed };
      } catch (err) {
        scope.open = false;
        await scope.idle();
        throw mapError(err);
      }
    };
    const failed = (err: unknown): never => {
      if (touched) this.versions.committed(touched);
      throw err;
    };
    return { attempt, failed };
  }

  /**
   * Reads at READ COMMITTED see the same inside BEGIN/COMMIT as outside (a snapshot per
   * statement), so the two extra round trips buy nothing.
   */
  read<T>(fn: (tx: ReadTx) => Promise<T>, opts?: CallOptions): Promise<T> {
    const signal = opts?.signal;
    if (signal?.aborted) return Promise.reject(new CallCancelled());
    // Admission control: reads wait in the pool's queue, bounded like the group commit's.
    if (this.pool.waitingCount >= this.maxQueued) return Promise.reject(this.refuse(`${this.pool.waitingCount} reads already wait for a connection`));
    return this.track(() => (signal ? this.readWhileWanted(fn, signal) : fn(this.reads)));
  }

  /**
   * A read whose caller may give up (its request's signal) runs on one connection, and starts
   * only if the caller still waits once the pool gave it one: a read that waited in the pool's
   * queue past its request's answer never starts (http/middleware/deadline.ts).
   */
  private async readWhileWanted<T>(fn: (tx: ReadTx) => Promise<T>, signal: AbortSignal): Promise<T> {
    const client = await this.pool.connect();
    if (signal.aborted) {
      client.release();
      throw new CallCancelled();
    }
    try {
      return await fn(this.readViewOn(client));
    } finally {
      // A connection destroyed meanwhile (a missed query deadline) is dropped by the pool.
      client.release();
    }
  }

  /** The repositories on one pooled connection, made once per connection. */
  private readViewOn(client: pg.PoolClient): ReadTx {
    let view = this.clientViews.get(client);
    if (!view) {
      const conn = new Conn(client);
      this.clientViews.set(client, (view = readView(postgresSql(conn), postgresHooks(conn, this.orderNumbers))));
    }
    return view;
  }

  /** What the operator's metrics show of the connections. */
  connectionStats(): ConnectionStats {
    return { destroyed: this.counts.destroyed, refused: this.counts.refused + this.committer.refused, clientErrors: this.counts.clientErrors, listening: this.notifications.connected() };
  }

  /**
   * Drops the idle connections of the queue's pool: the delivery watchdog's reset while the
   * worker's queue calls (all on that pool) fail or hang. The listener is not what stalled: it
   * finds its own dead connection (a heartbeat every HEARTBEAT_MS, each with the query
   * deadline) and reconnects itself, so the watchdog leaves it alone.
   */
  reset(): void {
    for (const client of idleClients(this.queuePool)) destroyConnection(client, new Error('reset by the delivery watchdog'));
  }

  /**
   * A claim whose COMMIT went unanswered: its leases are given back as soon as the database
   * answers (tried every second while they could still be live), so its deliveries go out
   * again at once rather than after their lease.
   */
  private readonly lostClaim = (o: ClaimOptions, leaseEnd: number): void => {
    const tries = Math.max(1, Math.ceil(o.leaseMs / LOST_CLAIM_RETRY_MS));
    const attempt = (n: number): void => {
      if (this.closed) return;
      queue.releaseLostClaim(this.queuePool, o.owner, leaseEnd).then(
        (released) => {
          if (released === 0) return;
          this.log.warn({ released }, 'gave back the leases of a claim whose COMMIT went unanswered');
          this.listeners.wake();
        },
        () => {
          if (n < tries) this.deadlineTimers.setTimeout(() => attempt(n + 1), LOST_CLAIM_RETRY_MS);
        },
      );
    };
    attempt(1);
  };

  private refuse(message: string): Error {
    this.counts.refused += 1;
    return Object.assign(new Error(message), { code: OVERLOADED });
  }

  /**
   * Moves with this instance's commits at once and with other instances' within STALENESS_MS;
   * null while this instance cannot vouch for that bound (versions.ts).
   */
  transactionsVersion(environmentId: string): string | null {
    if (this.closed) throw new Error('store is closed');
    return this.versions.of(environmentId);
  }

  /** Resolves once every write acknowledged before the call, by any instance, moves this instance's versions. */
  transactionsCaughtUp(): Promise<void> {
    return this.versions.caughtUp();
  }

  onDeliveriesReady(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  onEventsRecorded(listener: (environmentId: string) => void): () => void {
    return this.listeners.addEvents(listener);
  }

  prune(req: PruneRequest): Promise<PruneResult> {
    return this.track(() => prune(this.pool, req));
  }

  /**
   * Work already submitted finishes first, within its deadlines; should the database still not
   * answer after them, every connection is destroyed: close() never waits on a silent host.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pools = [this.pool, this.sequencePool, this.queuePool, this.notifierPool];
    const graceful = (async () => {
      while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
      this.listeners.clear();
      await this.notifications.stop();
      await Promise.all(pools.map((p) => p.end()));
    })();
    let timer: unknown = null;
    const bound = new Promise<void>((resolve) => {
      timer = this.deadlineTimers.setTimeout(resolve, closeBoundMs(this.deadlines));
    });
    await Promise.race([graceful, bound]);
    this.deadlineTimers.clearTimeout(timer);
    this.listeners.clear();
    this.notifications.destroy();
    for (const p of pools) for (const client of allClients(p)) destroyConnection(client, new Error('the store is closing'));
  }

  private createTx(db: Conn, scope: TxScope): Tx {
    return transactionView(postgresSql(db), postgresHooks(db, this.orderNumbers), scope);
  }

  /** Runs a store operation unless the store is closed or we are inside a transaction; close() waits for it. */
  private track<T>(op: () => Promise<T>): Promise<T> {
    try {
      if (this.closed) throw new Error('store is closed');
      // A transaction inside a transaction would commit on its own, and could wait for a pool
      // connection that only the outer one can give back.
      this.nesting.check();
    } catch (err) {
      return Promise.reject(err);
    }
    const p = op();
    this.inflight.add(p);
    const forget = (): void => {
      this.inflight.delete(p);
    };
    p.then(forget, forget);
    return p;
  }
}

/**
 * LISTEN deliveries_ready on a connection of its own (a pooled one would be handed to others).
 * When the connection drops it reconnects with back-off, and wakes the listeners once it is
 * back: notifications sent meanwhile are lost, so the workers should look at the queue. While
 * it is down, it wakes them every POLL_WHILE_DOWN_MS: polling covers for the notifications. A
 * silent connection is found by its heartbeats (every HEARTBEAT_MS, each a query with the
 * client-side deadline, which destroys the socket when missed).
 */
class NotificationListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private timer: unknown = null;
  private heartbeats: unknown = null;
  private polling: unknown = null;
  private backoffMs = RECONNECT_MIN_MS;

  constructor(
    private readonly config: pg.ClientConfig & { Client: typeof pg.Client },
    private readonly instanceId: string,
    private readonly wake: () => void,
    private readonly versions: PgTransactionVersions,
    private readonly log: Logger,
    private readonly timers: Timers,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimers();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** Stops at once, without a goodbye to a database that may not answer. */
  destroy(): void {
    this.stopped = true;
    this.clearTimers();
    const client = this.client;
    this.client = null;
    if (client) destroyConnection(client, new Error('the store is closing'));
  }

  connected(): boolean {
    return this.client !== null;
  }

  private clearTimers(): void {
    for (const t of [this.timer, this.heartbeats, this.polling]) if (t !== null) this.timers.clearTimeout(t);
    this.timer = this.heartbeats = this.polling = null;
  }

  /** While disconnected: wake the workers every POLL_WHILE_DOWN_MS, as a notification would. */
  private pollWhileDown(): void {
    if (this.polling !== null || this.stopped) return;
    this.polling = this.timers.setTimeout(() => {
      this.polling = null;
      if (this.stopped || this.client !== null) return;
      this.wake();
      this.pollWhileDown();
    }, POLL_WHILE_DOWN_MS);
  }

  private async connect(): Promise<void> {
    const { Client, ...config } = this.config;
    const client = new Client({
      ...config,
      application_name: `${APPLICATION_NAME}:listener`,
      // Its heartbeats need no flush (openPostgresStore: notifierPool).
      options: ASYNC_COMMIT,
    });
    client.on('notification', (msg) => {
      if (msg.channel === DELIVERIES_CHANNEL && msg.payload !== this.instanceId) this.wake();
      if (msg.channel === TRANSACTIONS_CHANNEL) this.transactionsChanged(msg.payload ?? '');
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, null));
    try {
      // connectionTimeoutMillis (sessionSettings) bounds this; LISTEN has the query deadline.
      await client.connect();
      await client.query(`LISTEN ${DELIVERIES_CHANNEL}; LISTEN ${TRANSACTIONS_CHANNEL}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.backoffMs = RECONNECT_MIN_MS;
    if (this.polling !== null) this.timers.clearTimeout(this.polling);
    this.polling = null;
    // Every HEARTBEAT_MS from the first connection until stop(), connected or not.
    if (this.heartbeats === null) this.beatLater();
  }

  private beatLater(): void {
    this.heartbeats = this.timers.setTimeout(() => {
      if (this.stopped) return;
      this.heartbeat();
      this.beatLater();
    }, HEARTBEAT_MS);
  }

  /** A batch's changed environments, or a heartbeat (`hb <instance> <id>`; versions.ts). */
  private transactionsChanged(payload: string): void {
    if (payload.startsWith('hb ')) {
      const [, instance, id] = payload.split(' ');
      if (instance === this.instanceId) this.versions.heard(Number(id));
      return;
    }
    const [instance, ...environments] = payload.split(' ');
    // This instance moved its own versions before answering the writers.
    if (instance !== this.instanceId) this.versions.committed(environments);
  }

  /** Sends a heartbeat unless one is on its way; a failed one means the connection is failing. */
  private heartbeat(): void {
    const client = this.client;
    if (client === null) return;
    const id = this.versions.heartbeat();
    if (id === null) return;
    client.query('SELECT pg_notify($1, $2)', [TRANSACTIONS_CHANNEL, `hb ${this.instanceId} ${id}`]).catch(() => this.versions.lost());
  }

  private lost(client: pg.Client, err: Error | null): void {
    if (this.client !== client) return; // not the live connection (stopping, or failed to start)
    this.client = null;
    this.versions.lost();
    // Destroyed, not ended: a goodbye to a silent host would wait for ever.
    destroyConnection(client, new Error('listener connection lost'));
    if (this.stopped) return;
    this.log.warn({ err: brief(err) }, 'deliveries_ready listener connection lost: reconnecting');
    this.pollWhileDown();
    this.reconnectLater();
  }

  private reconnectLater(): void {
    // Real timers never keep the process alive: the pool and the HTTP server do.
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      this.connect().then(
        () => {
          if (this.stopped) return;
          this.log.info('deliveries_ready listener reconnected');
          this.wake();
        },
        (err: unknown) => {
          if (this.stopped) return;
          this.log.warn({ err: brief(err), retryInMs: this.backoffMs }, 'deliveries_ready listener could not reconnect');
          this.reconnectLater();
        },
      );
      this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_MAX_MS);
    }, this.backoffMs);
  }
}

const RECONNECT_MIN_MS = 250;
/** How often the leases of a claim whose COMMIT went unanswered are tried to be given back. */
const LOST_CLAIM_RETRY_MS = 1_000;
/** How often the workers look at the queue while the listener is down. */
export const POLL_WHILE_DOWN_MS = 1_000;
/** Connection options of the connections that only NOTIFY (see openPostgresStore). */
const ASYNC_COMMIT = '-c synchronous_commit=off';
const RECONNECT_MAX_MS = 30_000;

/** What to log of a driver error: node-postgres attaches the whole client object to some. */
function brief(err: unknown): { message: string; code?: string } | null {
  if (err === null || err === undefined) return null;
  if (!(err instanceof Error)) return { message: String(err) };
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? { message: err.message, code } : { message: err.message };
}

export async function openPostgresStore(opts: PostgresStoreOptions): Promise<PostgresStore> {
  const log = opts.log ?? pino({ name: 'postgres-store', level: 'warn' });
  const timers = opts.timers ?? realTimers;
  const deadlines: PgDeadlines = { ...DEFAULT_DEADLINES, ...opts.deadlines };
  const counts: StoreCounts = { destroyed: 0, refused: 0, clientErrors: 0 };
  // Every pool: the session limits, the connect deadline and keepalive, and the client-side
  // query deadline that destroys a connection (deadlines.ts). A destroyed connection is never
  // pooled again; the next one is opened afresh, resolving the host again.
  const deadlineTimers = opts.deadlineTimers ?? realTimers;
  // A connection that missed its deadline most likely shares its host with the idle ones: after
  // a fail-over to a silent old host each of them would cost a request a whole deadline. They
  // are dropped with it, and the pools refill with fresh connections (to the new host).
  const pools: pg.Pool[] = [];
  // The same for a group-committed batch that missed its deadline (group-commit.ts).
  const onDeadlineMissed = (): void => {
    counts.destroyed += 1;
    for (const p of pools) for (const client of idleClients(p)) destroyConnection(client, new Error('dropped with a connection that missed its deadline'));
  };
  const Client = deadlineClient(deadlineTimers, queryDeadlineMs(deadlines), onDeadlineMissed, countClientErrors(counts, log));
  const common = { connectionString: opts.connectionString, Client, ...sessionSettings(deadlines) };
  const pool = new pg.Pool({ ...common, ...(opts.onStatement ? { Client: counting(Client, opts.onStatement) } : {}), max: opts.poolSize ?? 20, types: typeParsers, application_name: APPLICATION_NAME });
  const sequencePool = new pg.Pool({ ...common, max: 2, types: typeParsers, application_name: APPLICATION_NAME });
  // Claim, completion batch and a release or look-ahead at once; more would only queue in the database.
  const queuePool = new pg.Pool({ ...common, max: 3, types: typeParsers, application_name: `${APPLICATION_NAME}:queue` });
  // A notification needs no durability of its own (it tells of a commit that is durable): its
  // transaction holds the notification-queue lock only until its commit record is written.
  const notifierPool = new pg.Pool({ ...common, max: 2, application_name: `${APPLICATION_NAME}:notify`, options: ASYNC_COMMIT });
  pools.push(pool, sequencePool, queuePool, notifierPool);
  const bounds = {
    ...(opts.transactionsStalenessMs !== undefined ? { stalenessMs: opts.transactionsStalenessMs } : {}),
    ...(opts.transactionsMaxAgeMs !== undefined ? { maxAgeMs: opts.transactionsMaxAgeMs } : {}),
  };
  const limits = { deadlines, counts, deadlineTimers, Client, onDeadlineMissed, ...(opts.maxQueued !== undefined ? { maxQueued: opts.maxQueued } : {}) };
  const store = new PostgresStore(pool, opts.connectionString, log, sequencePool, queuePool, notifierPool, opts.guardNesting ?? true, bounds, timers, limits);
  try {
    await store.start();
    return store;
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
}

type StoreCounts = Omit<ConnectionStats, 'listening'>;

/** Counts and logs at debug what a connection's own 'error' handler takes in (its pool or caller may handle it too). */
function countClientErrors(counts: StoreCounts, log: Logger): OnClientError {
  return (err) => {
    counts.clientErrors += 1;
    log.debug({ err: brief(err) }, 'PostgreSQL connection error');
  };
}

/** How long close() lets submitted work finish: a unit's longest path through its deadlines. */
function closeBoundMs(d: PgDeadlines): number {
  return d.connectMs * 2 + d.transactionMs + 1_000;
}

/** A Client that tells `onStatement` of each query's text before sending it. */
function counting(Base: typeof pg.Client, onStatement: (text: string) => void): typeof pg.Client {
  return class CountingClient extends Base {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's query has a dozen overloads
    override query(...args: any[]): any {
      const first: unknown = args[0];
      onStatement(typeof first === 'string' ? first : String((first as { text?: unknown } | null)?.text ?? ''));
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
  } as typeof pg.Client;
}
