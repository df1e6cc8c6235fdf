// What both stores share about their numbered, append-only migrations: each store has its own
// migrations/NNNN_name.sql files (its own dialect), read and checked the same way, and the
// same refusal of a database written by a newer version.
//
// The rule from SHARED_FROM on (migrations.test.ts checks it): a change of schema is one
// migration with the same number and name in both stores, even where one store has nothing to
// do (its file then holds only a comment saying why). Before it the stores had drifted (SQLite
// 0002 has no PostgreSQL twin, PostgreSQL's 0005 delivery_leases came to SQLite as its 0006);
// both reached 0006 with the same queue structure.
import { readdirSync, readFileSync } from 'node:fs';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

/** The first migration number both stores share, name included. */
export const SHARED_FROM = 7;

/** The migrations from SHARED_FROM on whose number or name one store lacks (none when the rule holds). */
export function unsharedMigrations(a: readonly Migration[], b: readonly Migration[]): string[] {
  const names = (ms: readonly Migration[]) => new Set(ms.filter((m) => m.version >= SHARED_FROM).map((m) => m.name));
  const [x, y] = [names(a), names(b)];
  return [...[...x].filter((n) => !y.has(n)), ...[...y].filter((n) => !x.has(n))].sort();
}

/** The migrations in `dir`, checked to be numbered 1, 2, 3, ... without gaps. */
export function loadMigrationFiles(dir: URL): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  return files.map((name, i) => {
    const m = FILE.exec(name);
    if (!m) throw new Error(`migration file name must look like 0001_name.sql: ${name}`);
    const version = Number(m[1]);
    if (version !== i + 1) throw new Error(`migrations must be numbered without gaps: expected ${i + 1}, found ${name}`);
    return { version, name, sql: readFileSync(new URL(name, dir), 'utf8') };
  });
}

/** Throws when the database has a migration the code does not know (a newer schema). */
export function assertNoUnknownMigrations(applied: readonly number[], migrations: readonly Migration[]): void {
  const known = new Set(migrations.map((m) => m.version));
  const unknown = applied.filter((v) => !known.has(v));
  if (unknown.length > 0) {
    throw new Error(
      `database schema has migration ${unknown.join(', ')} that this code does not know (it knows up to ${migrations.length}); ` +
        'it was written by a newer version: refusing to start',
    );
  }
}
