// Numbered, append-only migrations: migrations/NNNN_name.sql, applied in order, each in its own
// transaction together with its row in schema_migrations. A database that has a migration this
// code does not know was written by a newer version: we refuse it rather than guess.
import type Database from 'better-sqlite3';
import { assertNoUnknownMigrations, loadMigrationFiles, type Migration } from '../migrations.ts';

export type { Migration };

export const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** The migrations shipped with the code, checked to be numbered 1, 2, 3, ... without gaps. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return loadMigrationFiles(dir);
}

function appliedVersions(db: Database.Database): number[] {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!table) return [];
  return (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version);
}

/** Throws when the database has a migration the code does not know (a newer schema). */
export function assertKnownSchema(db: Database.Database, migrations: readonly Migration[] = loadMigrations()): void {
  assertNoUnknownMigrations(appliedVersions(db), migrations);
}

/** Applies the missing migrations; returns the versions it applied. */
export function migrate(db: Database.Database, migrations: readonly Migration[] = loadMigrations(), now: () => number = Date.now): number[] {
  assertKnownSchema(db, migrations);
  const applied: number[] = [];
  for (const m of migrations) {
    // IMMEDIATE takes the write lock first, so a second process migrating at the same time
    // waits, then sees the version recorded and skips it.
    db.exec('BEGIN IMMEDIATE');
    try {
      if (!appliedVersions(db).includes(m.version)) {
        db.exec(m.sql);
        db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, now());
        applied.push(m.version);
      }
      db.exec('COMMIT');
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
    }
  }
  return applied;
}
