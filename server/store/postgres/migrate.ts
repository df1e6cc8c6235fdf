// Numbered, append-only migrations of the PostgreSQL store: migrations/NNNN_name.sql (its own
// files, not SQLite's), applied in order, each in its own transaction together with its row
// in schema_migrations. Several instances may start together against one database: a session
// advisory lock makes one migrate while the others wait, then find nothing left to do.
//
// Rolling upgrades (issue 60, migrations.ts): a database with migrations this code does not
// know is accepted when every one of them is expand, and refused naming the first contract one.
// A contract migration is never applied while an instance whose code predates it is alive
// (instances.ts): a plain start leaves it, and what follows it, for later (logged);
// `npm run admin -- migrate --contract` refuses.
import type pg from 'pg';
import { pino, type Logger } from 'pino';
import { withoutDeadline } from './deadlines.ts';
import { compatRecords, loadMigrationFiles, newerMigrations, newerSchemaMessage, type AppliedMigration, type Migration } from '../migrations.ts';
import { INSTANCE_TTL_MS, holdOlderInstances, olderLiveInstances, type InstanceRow } from './instances.ts';

export type { Migration };

export const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** Advisory lock key held while migrating (per database); instances register under it, shared. */
export const MIGRATION_LOCK = 7_270_001;

const defaultLog = pino({ name: 'migrations', level: 'info' });

/** The migrations shipped with the code, checked to be numbered 1, 2, 3, ... without gaps. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return loadMigrationFiles(dir);
}

async function appliedMigrations(db: pg.Pool | pg.PoolClient): Promise<AppliedMigration[]> {
  const t = await db.query<{ present: boolean; compat: boolean }>(
    `SELECT to_regclass('schema_migrations') IS NOT NULL AS present,
            EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'schema_migrations' AND column_name = 'compat') AS compat`,
  );
  if (!t.rows[0]?.present) return [];
  const columns = t.rows[0].compat ? 'version, name, compat' : 'version, NULL AS name, NULL AS compat';
  return (await db.query<AppliedMigration>(`SELECT ${columns} FROM schema_migrations ORDER BY version`)).rows;
}

/** The applied migrations; throws when one this code does not know is not expand (migrations.ts). */
async function checkedApplied(db: pg.Pool | pg.PoolClient, migrations: readonly Migration[]): Promise<{ applied: AppliedMigration[]; newer: AppliedMigration[] }> {
  const applied = await appliedMigrations(db);
  return { applied, newer: newerMigrations(applied, migrations) };
}

/** Throws when the database has a migration this code cannot run on; logs the newer ones it can. */
export async function assertKnownSchema(db: pg.Pool | pg.PoolClient, migrations: readonly Migration[] = loadMigrations(), log: Logger = defaultLog): Promise<number[]> {
  const { applied, newer } = await checkedApplied(db, migrations);
  if (newer.length > 0) log.warn({ newer: newer.map((m) => m.name ?? m.version) }, newerSchemaMessage(newer, migrations));
  return applied.map((a) => a.version);
}

export interface MigrateOptions {
  /**
   * 'start' (a plain start, `npm run admin -- migrate`): a contract migration waits while an
   * older instance is alive. 'contract' (`migrate --contract`): refuses instead.
   */
  mode?: 'start' | 'contract';
  log?: Logger;
  /** Stamps schema_migrations.applied_at; liveness is judged on the database's clock (instances.ts). */
  now?: () => number;
  /** A heartbeat older than this, on the database's clock, is a dead instance's. */
  ttlMs?: number;
}

export interface MigrationOutcome {
  applied: number[];
  /** The contract migration left for later, and the older instances still alive that it would break. */
  deferred: { migration: string; olderInstances: InstanceRow[] } | null;
  /** Applied migrations newer than this code (all expand). */
  newer: AppliedMigration[];
}

/** Applies the missing migrations; returns the versions it applied (none when another instance did). */
export async function migrate(pool: pg.Pool, migrations: readonly Migration[] = loadMigrations(), now: () => number = Date.now): Promise<number[]> {
  return (await migrateSchema(pool, migrations, { now })).applied;
}

export async function migrateSchema(pool: pg.Pool, migrations: readonly Migration[] = loadMigrations(), opts: MigrateOptions = {}): Promise<MigrationOutcome> {
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    return await withoutDeadline(client, () => applyMissing(client, migrations, opts));
  } catch (err) {
    failed = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    // After a failure the session is dropped, not pooled: that also frees the advisory lock.
    client.release(failed);
  }
}

/**
 * Under the migration lock, without the store's deadlines: waiting for another instance's
 * migrations, or building an index, may take longer than any request should. The session's
 * limits are lifted for this session only and set back before it returns to the pool.
 */
async function applyMissing(client: pg.PoolClient, migrations: readonly Migration[], opts: MigrateOptions): Promise<MigrationOutcome> {
  const now = opts.now ?? Date.now;
  const log = opts.log ?? defaultLog;
  await client.query('SET statement_timeout = 0; SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 0');
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    // Read under the lock: whoever held it before us has committed everything it applied.
    // Newer migrations this code accepts were logged when the store opened (assertKnownSchema).
    const { applied: rows, newer } = await checkedApplied(client, migrations);
    const done = new Set(rows.map((r) => r.version));
    const outcome: MigrationOutcome = { applied: [], deferred: null, newer };
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      const older = await applyOne(client, m, migrations, now(), opts.ttlMs ?? INSTANCE_TTL_MS);
      if (older.length > 0) {
        const who = older.map((i) => `${i.id} (${i.host} pid ${i.pid}, code knows up to ${i.codeVersion})`).join(', ');
        if (opts.mode === 'contract') throw new Error(`contract migration ${m.name} would break instances still running older code: ${who}; upgrade or stop them first`);
        log.warn({ migration: m.name, olderInstances: older.map((i) => i.id) }, `contract migration ${m.name} waits: instances running older code are alive (${who}); run \`npm run admin -- migrate --contract\` once every instance is upgraded`);
        outcome.deferred = { migration: m.name, olderInstances: older };
        break;
      }
      outcome.applied.push(m.version);
    }
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    return outcome;
  } finally {
    await client.query('RESET statement_timeout; RESET lock_timeout; RESET idle_in_transaction_session_timeout');
  }
}

/**
 * Applies `m` in its own transaction. A contract migration only when no instance whose code
 * predates it is alive: those are returned instead, nothing applied. Their rows are held until
 * the commit (holdOlderInstances): a beat either committed before the look, or waits and then
 * sees the migration. Under the migration lock an instance cannot register meanwhile either
 * (it holds the lock shared while it does).
 */
async function applyOne(client: pg.PoolClient, m: Migration, migrations: readonly Migration[], at: number, ttlMs: number): Promise<InstanceRow[]> {
  try {
    await client.query('BEGIN');
    if (m.compat === 'contract') {
      await holdOlderInstances(client, m.version);
      const older = await olderLiveInstances(client, m.version, ttlMs);
      if (older.length > 0) {
        await client.query('ROLLBACK');
        return older;
      }
    }
    await client.query(m.sql);
    await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [m.version, at]);
    await recordCompat(client, migrations);
    await client.query('COMMIT');
    return [];
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
  }
}

/** Names and classifies the rows that do not say yet, once schema_migrations has the columns (0011). */
async function recordCompat(client: pg.PoolClient, migrations: readonly Migration[]): Promise<void> {
  const has = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'schema_migrations' AND column_name = 'compat'",
  );
  if (!has.rows[0]?.n) return;
  const r = compatRecords(migrations);
  await client.query(
    `UPDATE schema_migrations s SET name = k.name, compat = k.compat
       FROM unnest($1::int[], $2::text[], $3::text[]) AS k(version, name, compat)
      WHERE s.version = k.version AND s.compat IS NULL`,
    [r.versions, r.names, r.compats],
  );
}
