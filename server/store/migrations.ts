// What both stores share about their numbered, append-only migrations: each store has its own
// migrations/NNNN_name.sql files (its own dialect), read and checked the same way, and the
// same refusal of a database written by a newer version.
import { readdirSync, readFileSync } from 'node:fs';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

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
