// Deadlines on every wait for PostgreSQL. Managed databases fail over, partition and slow
// down; a socket to a host that went silent never errors by itself (no reset arrives), so
// every wait here ends on a clock of ours:
// - PostgreSQL's own limits (statement_timeout, lock_timeout, idle_in_transaction_session_timeout)
//   end what the database can still end: the statement fails, the connection stays usable.
// - A client-side deadline ends what the database cannot: a query not answered within
//   statementMs + QUERY_MARGIN_MS destroys its socket. Its error goes to the caller, the pool
//   drops the connection (never reused) and opens a fresh one, resolving the host again, so a
//   fail-over behind one DNS name or proxy is followed. Work with a bound of its own runs its
//   queries with another deadline (withDeadline: the pruner's batches) or none (migrations).
// - Opening a connection and waiting for a pooled one end after connectMs.
// - TCP keepalive notices a dead peer on idle connections.
import pg from 'pg';
import type { Timers } from '../../timers.ts';
import { destroyConnection } from './pg-internals.ts';

export interface PgDeadlines {
  /** statement_timeout and lock_timeout of every session (DATABASE_STATEMENT_TIMEOUT_MS). */
  statementMs: number;
  /** Opening a connection, or waiting for a pooled one (DATABASE_CONNECT_TIMEOUT_MS). */
  connectMs: number;
  /** A group-committed batch from its first statement to COMMIT's answer (DATABASE_TRANSACTION_TIMEOUT_MS). */
  transactionMs: number;
}

export const DEFAULT_DEADLINES: PgDeadlines = { statementMs: 2_000, connectMs: 2_000, transactionMs: 4_000 };

/** The database cancels a statement first; the client destroys the socket only when no answer comes at all. */
export const QUERY_MARGIN_MS = 1_000;
/** Idle time before TCP keepalive probes begin. */
const KEEPALIVE_IDLE_MS = 5_000;

/** The client-side deadline of one query. */
export const queryDeadlineMs = (d: PgDeadlines): number => d.statementMs + QUERY_MARGIN_MS;

/** A query (or a batch, or a wait) ended by our clock: its connection was destroyed. */
export class DeadlineExceeded extends Error {
  override readonly name = 'DeadlineExceeded';
  /** A network code: the store is unavailable, not the statement wrong (domain/store-unavailable.ts). */
  readonly code = 'ETIMEDOUT';
  constructor(what: string, ms: number) {
    super(`${what} got no answer within ${ms} ms; its connection was destroyed`);
  }
}

/** Told of every connection destroyed for a missed deadline (the operator's metric). */
export type OnDestroyed = () => void;

/** Told of every error a client's own 'error' handler takes in (counted and logged by the store). */
export type OnClientError = (err: Error) => void;

/** The connection settings every session shares: PostgreSQL's own limits, the connect deadline, keepalive. */
export function sessionSettings(d: PgDeadlines): Pick<pg.ClientConfig, 'statement_timeout' | 'lock_timeout' | 'idle_in_transaction_session_timeout' | 'connectionTimeoutMillis' | 'keepAlive' | 'keepAliveInitialDelayMillis'> {
  return {
    statement_timeout: d.statementMs,
    lock_timeout: d.statementMs,
    // A transaction left open by a client that went away holds its locks no longer than this.
    idle_in_transaction_session_timeout: d.transactionMs + QUERY_MARGIN_MS,
    connectionTimeoutMillis: d.connectMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
  };
}

/** A client whose queries may run with another client-side deadline, or none (migrations). */
export interface Deadlined {
  /** fn's queries get deadlineMs instead of the pool's deadline; null: none. */
  within<T>(deadlineMs: number | null, fn: () => Promise<T>): Promise<T>;
}

type QueryArgs = unknown[];

/**
 * pg.Client whose every query has the client-side deadline: past it the socket is destroyed.
 * Pools build their connections with it (`Client` option). It also listens for 'error' itself,
 * so a connection destroyed while nobody listens never crashes the process; what it takes in
 * goes to onError (the pool or the caller may handle the same error too).
 */
export function deadlineClient(timers: Timers, deadlineMs: number, onDestroyed: OnDestroyed, onError: OnClientError = () => undefined): typeof pg.Client {
  return class DeadlineClient extends pg.Client implements Deadlined {
    private currentMs: number | null = deadlineMs;

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.on('error', onError);
    }

    async within<T>(ms: number | null, fn: () => Promise<T>): Promise<T> {
      const before = this.currentMs;
      this.currentMs = ms;
      try {
        return await fn();
      } finally {
        this.currentMs = before;
      }
    }

    // One signature for pg's many overloads: the arguments pass through untouched.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override query(...args: QueryArgs): any {
      const ms = this.currentMs;
      if (ms === null || isSubmittable(args[0])) return (super.query as (...a: QueryArgs) => unknown)(...args);
      let timer: unknown = timers.setTimeout(() => {
        timer = null;
        onDestroyed();
        destroyConnection(this, new DeadlineExceeded('a PostgreSQL query', ms));
      }, ms);
      const settled = (): void => {
        if (timer !== null) timers.clearTimeout(timer);
        timer = null;
      };
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        args[last] = (err: unknown, res: unknown) => {
          settled();
          (callback as (e: unknown, r: unknown) => void)(err, res);
        };
        return (super.query as (...a: QueryArgs) => unknown)(...args);
      }
      const result = (super.query as (...a: QueryArgs) => unknown)(...args) as Promise<unknown>;
      result.then(settled, settled);
      return result;
    }
  };
}

/** pg-cursor and friends manage their own reads: not used by the store, passed through. */
function isSubmittable(arg: unknown): boolean {
  return typeof arg === 'object' && arg !== null && typeof (arg as { submit?: unknown }).submit === 'function';
}

/** Runs fn on a client with another client-side deadline (null: none), when the client has one. */
export function withDeadline<T>(client: unknown, deadlineMs: number | null, fn: () => Promise<T>): Promise<T> {
  const c = client as Partial<Deadlined>;
  return typeof c.within === 'function' ? c.within(deadlineMs, fn) : fn();
}

/** Runs fn on a client without the client-side deadline (migrations). */
export const withoutDeadline = <T>(client: unknown, fn: () => Promise<T>): Promise<T> => withDeadline(client, null, fn);
