// Numbered, append-only migrations of the PostgreSQL store: migrations/NNNN_name.sql (its own
// files, not SQLite's), applied in order, each in its own transaction together with its row
// in schema_migrations. Several instances may start together against one database: a session
// advisory lock makes one migrate while the others wait, then find nothing left to do. A
// database that has a migration this code does not know was written by a newer version: we
// refuse it rather than guess.
import { withoutDeadline } from './deadlines.ts';
import type pg from 'pg';
import { assertNoUnknownMigrations, loadMigrationFiles, type Migration } from '../migrations.ts';

export type { Migration };

export const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** Advisory lock key held while migrating (per database). */
const MIGRATION_LOCK = 7_270_001;

/** The migrations shipped with the code, checked to be numbered 1, 2, 3, ... without gaps. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return loadMigrationFiles(dir);
}

async function appliedVersions(db: pg.Pool | pg.PoolClient): Promise<number[]> {
  const t = await db.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  if (!t.rows[0]?.present) return [];
  const r = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  return r.rows.map((row) => row.version);
}

/** Throws when the database has a migration the code does not know (a newer schema). */
export async function assertKnownSchema(db: pg.Pool | pg.PoolClient, migrations: readonly Migration[] = loadMigrations()): Promise<number[]> {
  const applied = await appliedVersions(db);
  assertNoUnknownMigrations(applied, migrations);
  return applied;
}

/** Applies the missing migrations; returns the versions it applied (none when another instance did). */
export async function migrate(pool: pg.Pool, migrations: readonly Migration[] = loadMigrations(), now: () => number = Date.now): Promise<number[]> {
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    return await withoutDeadline(client, () => applyMissing(client, migrations, now));
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
async function applyMissing(client: pg.PoolClient, migrations: readonly Migration[], now: () => number): Promise<number[]> {
  await client.query('SET statement_timeout = 0; SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 0');
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    // Read under the lock: whoever held it before us has committed everything it applied.
    const done = new Set(await assertKnownSchema(client, migrations));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      try {
        await client.query('BEGIN');
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [m.version, now()]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(m.version);
    }
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    return applied;
  } finally {
    await client.query('RESET statement_timeout; RESET lock_timeout; RESET idle_in_transaction_session_timeout');
  }
}
