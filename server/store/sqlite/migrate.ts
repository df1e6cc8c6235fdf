// Numbered, append-only migrations: migrations/NNNN_name.sql, applied in order, each in its own
// transaction together with its row in schema_migrations. A database with migrations this code
// does not know (a newer release ran on it, then this one was started again) is accepted when
// each of them is expand, and refused naming the first contract one (migrations.ts). One
// process serves a SQLite database, so nothing else can be running older code: every pending
// migration is applied, contract ones included.
import type Database from 'better-sqlite3';
import { pino, type Logger } from 'pino';
import { compatRecords, loadMigrationFiles, newerMigrations, newerSchemaMessage, type AppliedMigration, type Migration } from '../migrations.ts';

export type { Migration };

export const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

const defaultLog = pino({ name: 'migrations', level: 'info' });

/** The migrations shipped with the code, checked to be numbered 1, 2, 3, ... without gaps. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return loadMigrationFiles(dir);
}

function hasCompatColumn(db: Database.Database): boolean {
  return (db.prepare("SELECT 1 FROM pragma_table_info('schema_migrations') WHERE name = 'compat'").all() as unknown[]).length > 0;
}

function appliedMigrations(db: Database.Database): AppliedMigration[] {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!table) return [];
  const columns = hasCompatColumn(db) ? 'version, name, compat' : 'version, NULL AS name, NULL AS compat';
  return db.prepare(`SELECT ${columns} FROM schema_migrations ORDER BY version`).all() as AppliedMigration[];
}

const appliedVersions = (db: Database.Database): number[] => appliedMigrations(db).map((a) => a.version);

/** Throws when the database has a migration this code cannot run on; logs the newer ones it can. */
export function assertKnownSchema(db: Database.Database, migrations: readonly Migration[] = loadMigrations(), log: Logger = defaultLog): void {
  const newer = newerMigrations(appliedMigrations(db), migrations);
  if (newer.length > 0) log.warn({ newer: newer.map((m) => m.name ?? m.version) }, newerSchemaMessage(newer, migrations));
}

/** Applies the missing migrations; returns the versions it applied. */
export function migrate(db: Database.Database, migrations: readonly Migration[] = loadMigrations(), now: () => number = Date.now): number[] {
  // Checked (and logged) by openSqliteStore already; here only refused.
  newerMigrations(appliedMigrations(db), migrations);
  const applied: number[] = [];
  for (const m of migrations) {
    // IMMEDIATE takes the write lock first, so a second process migrating at the same time
    // waits, then sees the version recorded and skips it.
    db.exec('BEGIN IMMEDIATE');
    try {
      if (!appliedVersions(db).includes(m.version)) {
        db.exec(m.sql);
        db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, now());
        recordCompat(db, migrations);
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

/** Names and classifies the rows that do not say yet, once schema_migrations has the columns (0011). */
function recordCompat(db: Database.Database, migrations: readonly Migration[]): void {
  if (!hasCompatColumn(db)) return;
  const r = compatRecords(migrations);
  const update = db.prepare('UPDATE schema_migrations SET name = ?, compat = ? WHERE version = ? AND compat IS NULL');
  r.versions.forEach((version, i) => update.run(r.names[i], r.compats[i], version));
}
