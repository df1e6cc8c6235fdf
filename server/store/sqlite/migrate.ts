// Numbered, append-only migrations: migrations/NNNN_name.sql, applied in order, each in its own
// transaction together with its row in schema_migrations. A database that has a migration this
// code does not know was written by a newer version: we refuse it rather than guess.
import { readdirSync, readFileSync } from 'node:fs';
import type Database from 'better-sqlite3';

export const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

/** The migrations shipped with the code, checked to be numbered 1, 2, 3, ... without gaps. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  return files.map((name, i) => {
    const m = FILE.exec(name);
    if (!m) throw new Error(`migration file name must look like 0001_name.sql: ${name}`);
    const version = Number(m[1]);
    if (version !== i + 1) throw new Error(`migrations must be numbered without gaps: expected ${i + 1}, found ${name}`);
    return { version, name, sql: readFileSync(new URL(name, dir), 'utf8') };
  });
}

function appliedVersions(db: Database.Database): number[] {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!table) return [];
  return (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version);
}

/** Throws when the database has a migration the code does not know (a newer schema). */
export function assertKnownSchema(db: Database.Database, migrations: readonly Migration[] = loadMigrations()): void {
  const known = new Set(migrations.map((m) => m.version));
  const unknown = appliedVersions(db).filter((v) => !known.has(v));
  if (unknown.length > 0) {
    const latest = migrations.length;
    throw new Error(
      `database schema has migration ${unknown.join(', ')} that this code does not know (it knows up to ${latest}); ` +
        'it was written by a newer version: refusing to start',
    );
  }
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
