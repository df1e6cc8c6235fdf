// A serving instance's registration (issue 60): its row in instances, refreshed every
// HEARTBEAT_MS on its own connection, deleted at a clean shutdown. Registering holds the
// migration lock shared and checks the schema under it, so an instance is either registered
// before a contract migration looks for older instances, or sees that migration and refuses
// (migrate.ts). Only the server registers: the admin tool and tests that open a store do not.
//
// A beat that finds a migration this code cannot run on (a contract migration applied while
// this instance was not seen alive: paused, or cut off, past the TTL) writes nothing and beats
// no more: the instance is told to stop (onSchemaRefused), and a server exits (main.ts).
// Until its first beat after a pause the instance cannot know that, so it serves only while
// its last confirmed beat is younger than LEASE_MS on its own clock (notServing()).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { realTimers, type Timers } from '../../timers.ts';
import { cannotRunOn, type AppliedMigration, type Migration } from '../migrations.ts';
import { BEAT_RETRY_MS, HEARTBEAT_MS, LEASE_MS, beat, beatChecked, forget, type InstanceIdentity } from './instances.ts';
import { MIGRATION_LOCK, assertKnownSchema, loadMigrations } from './migrate.ts';

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

const silent = pino({ level: 'silent' });

/** How long registering waits for a migration that another process is applying. */
const REGISTER_WAIT_MS = 15 * 60 * 1000;

/** The longest stop() waits to delete the row: plenty on a database that answers, little of the shutdown's grace on one that does not. */
const STOP_BOUND_MS = 2_000;

/** Rows dead this long are removed by the next instance that registers (a crash leaves its row). */
const FORGET_MS = 24 * 60 * 60 * 1000;

export interface HeartbeatOptions {
  /** A pool of its own (one connection), ended by stop(). */
  pool: pg.Pool;
  log: Logger;
  /** Shown beside code_version (which is what orders releases); default the package's version. */
  release?: string;
  migrations?: readonly Migration[];
  timers?: Timers;
  /** This host's clock in ms, only ever compared with itself (the lease); default performance.now. */
  now?: () => number;
  everyMs?: number;
  id?: string;
  /** A beat found a migration this code cannot run on (named in the error): the instance must stop serving. */
  onSchemaRefused?: (err: Error) => void;
}

export interface InstanceHeartbeat {
  readonly id: string;
  /**
   * Why the instance must not serve now, or null while it may: a migration its code cannot run
   * on, or no beat confirmed for LEASE_MS (paused, or cut off: the others may count it dead).
   */
  notServing(): string | null;
  /** Beats now instead of at the timer (unless a beat is on its way): a process continued after a stop learns at once where it stands. */
  beatNow(): void;
  /** Stops refreshing and deletes the row (a clean shutdown). */
  stop(): Promise<void>;
}

/** Registers the instance under the migration lock (shared) and keeps its row alive. */
export async function registerInstance(opts: HeartbeatOptions): Promise<InstanceHeartbeat> {
  const timers = opts.timers ?? realTimers;
  const now = opts.now ?? (() => performance.now());
  const migrations = opts.migrations ?? loadMigrations();
  const me: InstanceIdentity = {
    id: opts.id ?? randomUUID(),
    codeVersion: migrations.length,
    release: opts.release ?? packageVersion(),
    host: hostname(),
    pid: process.pid,
  };
  /** When the last beat that was written (registration's included) was sent, on this host's clock. */
  let confirmedAt = 0;
  const client = await opts.pool.connect();
  try {
    await client.query('BEGIN');
    // Waits for a migration in progress (an index build may take minutes): this statement gets
    // a deadline of its own instead of the pool's.
    await client.query(`SET LOCAL statement_timeout = ${REGISTER_WAIT_MS}`);
    await client.query({ text: 'SELECT pg_advisory_xact_lock_shared($1)', values: [MIGRATION_LOCK], query_timeout: REGISTER_WAIT_MS + 1_000 } as pg.QueryConfig);
    // Checked again under the lock; what it accepts was logged when the store opened.
    await assertKnownSchema(client, migrations, silent);
    await forget(client, null, FORGET_MS);
    confirmedAt = now();
    await beat(client, me);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  opts.log.info({ instance: me.id, codeVersion: me.codeVersion, release: me.release }, 'registered in instances (heartbeat)');

  let timer: unknown = null;
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();
  let failing = false;
  let refused: Error | null = null;
  const refuse = (blocking: AppliedMigration): void => {
    refused = new Error(`${cannotRunOn(blocking, me.codeVersion)}; it was applied while this instance was not seen alive: stopping`);
    opts.log.error({ instance: me.id, migration: blocking.name ?? blocking.version }, refused.message);
    opts.onSchemaRefused?.(refused);
  };
  const tick = (): void => {
    timer = null;
    const sentAt = now();
    inFlight = beatChecked(opts.pool, me).then(
      ({ blocking, held }) => {
        if (blocking) return refuse(blocking);
        if (held) confirmedAt = sentAt;
        if (failing) opts.log.info({ instance: me.id }, 'heartbeat written again');
        failing = false;
      },
      (err: unknown) => {
        // Tried again soon; missing three ticks makes this instance dead to the others.
        if (!failing) opts.log.warn({ instance: me.id, err: (err as Error).message }, 'heartbeat not written');
        failing = true;
      },
    );
    void inFlight.then(() => {
      const every = opts.everyMs ?? HEARTBEAT_MS;
      if (!stopped && refused === null) timer = timers.setTimeout(tick, failing ? Math.min(BEAT_RETRY_MS, every) : every);
    });
  };
  timer = timers.setTimeout(tick, opts.everyMs ?? HEARTBEAT_MS);

  return {
    id: me.id,
    notServing() {
      if (refused !== null) return refused.message;
      const since = now() - confirmedAt;
      return since < LEASE_MS ? null : `no heartbeat confirmed for ${Math.floor(since / 1000)} s: other instances may count this one dead, and a contract migration may have run`;
    },
    beatNow() {
      // No timer set: a beat is on its way (or none is due any more).
      if (stopped || refused !== null || timer === null) return;
      timers.clearTimeout(timer);
      tick();
    },
    async stop() {
      stopped = true;
      if (timer !== null) timers.clearTimeout(timer);
      const leave = (async () => {
        await inFlight;
        try {
          await forget(opts.pool, me.id, FORGET_MS);
        } catch (err) {
          // Not fatal: the row goes dead after the TTL.
          opts.log.warn({ instance: me.id, err: (err as Error).message }, 'instance row not removed at shutdown: it counts as alive until its TTL');
        }
        await opts.pool.end().catch(() => undefined);
      })();
      // A silent database must not hold the shutdown: past the bound the row is left to its TTL.
      let bound: unknown = null;
      await Promise.race([leave, new Promise<void>((resolve) => (bound = timers.setTimeout(resolve, STOP_BOUND_MS)))]);
      timers.clearTimeout(bound);
    },
  };
}

/** The pool a server's heartbeat uses: one connection, every statement bounded (registration's lock wait by its own bound). */
export function heartbeatPool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: 1,
    connectionTimeoutMillis: 2_000,
    statement_timeout: 2_000,
    // Client-side too: a silent host never answers, and a beat must not wait on it forever.
    query_timeout: 3_000,
    idle_in_transaction_session_timeout: 5_000,
    keepAlive: true,
    application_name: 'payments-service:heartbeat',
  });
  // An idle connection's failure: the next beat opens another.
  pool.on('error', () => undefined);
  // The pool listens only while a connection is idle: a reset between a beat's statements
  // (the connection checked out, no query running) would be an 'error' nobody hears, which
  // ends the process. The beat's own query fails with it and is retried.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
