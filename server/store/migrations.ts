// What both stores share about their numbered, append-only migrations: each store has its own
// migrations/NNNN_name.sql files (its own dialect), read and checked the same way, and the
// same refusal of a database written by a newer version.
//
// The rule from SHARED_FROM on (migrations.test.ts checks it): a change of schema is one
// migration with the same number and name in both stores, even where one store has nothing to
// do (its file then holds only a comment saying why). Before it the stores had drifted (SQLite
// 0002 has no PostgreSQL twin, PostgreSQL's 0005 delivery_leases came to SQLite as its 0006);
// both reached 0006 with the same queue structure.
//
// Each migration also says whether code of the release before it keeps working once it has
// run (expand: a new table, a nullable or defaulted column, an index) or not (contract: a column
// dropped or redefined, values rewritten): compat.json beside the files, keyed by the name
// without its number (a renumbering keeps the entry). The database records it with the
// migration (schema_migrations.compat, from 0011_rolling_upgrades on), so that code older than
// a migration can tell whether it may run on it: it accepts a newer schema whose newer
// migrations are all expand, and refuses the first contract one by name.
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export type Compat = 'expand' | 'contract';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Whether code of the release before this migration keeps working after it runs. */
  compat: Compat;
}

/** A row of schema_migrations; name and compat are null before 0011_rolling_upgrades recorded them. */
export interface AppliedMigration {
  version: number;
  name: string | null;
  compat: Compat | null;
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

/** The manifest's key of a migration file: its name without number and extension (0011_rolling_upgrades.sql: rolling_upgrades). */
export function compatKey(file: string): string {
  return file.replace(/^\d{4}_/, '').replace(/\.sql$/, '');
}

interface CompatEntry {
  compat: Compat;
  why: string;
}

/** compat.json of `dir`: every migration's entry, checked to be expand or contract with a reason. */
export function loadCompatManifest(dir: URL): Record<string, CompatEntry> {
  const file = new URL('compat.json', dir);
  if (!existsSync(file)) throw new Error(`${file.pathname} is missing: every migration says whether it is expand or contract`);
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, CompatEntry>;
  for (const [key, entry] of Object.entries(manifest)) {
    if (entry.compat !== 'expand' && entry.compat !== 'contract') throw new Error(`compat.json: ${key} must be "expand" or "contract"`);
    if (typeof entry.why !== 'string' || entry.why.trim() === '') throw new Error(`compat.json: ${key} needs a "why"`);
  }
  return manifest;
}

/** The migrations in `dir`, checked to be numbered 1, 2, 3, ... without gaps, each classified in its compat.json. */
export function loadMigrationFiles(dir: URL): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  const manifest = loadCompatManifest(dir);
  const migrations = files.map((name, i) => {
    const m = FILE.exec(name);
    if (!m) throw new Error(`migration file name must look like 0001_name.sql: ${name}`);
    const version = Number(m[1]);
    if (version !== i + 1) throw new Error(`migrations must be numbered without gaps: expected ${i + 1}, found ${name}`);
    const entry = manifest[compatKey(name)];
    if (!entry) throw new Error(`compat.json has no entry "${compatKey(name)}": say whether ${name} is expand or contract`);
    return { version, name, sql: readFileSync(new URL(name, dir), 'utf8'), compat: entry.compat };
  });
  const stale = Object.keys(manifest).filter((key) => !files.some((f) => compatKey(f) === key));
  if (stale.length > 0) throw new Error(`compat.json names migrations that do not exist: ${stale.join(', ')}`);
  return migrations;
}

/** A migration as the database names it (without .sql), or its number when it does not record a name. */
const label = (a: AppliedMigration): string => a.name?.replace(/\.sql$/, '') ?? `version ${a.version}`;

/**
 * The database's migrations newer than this code, when this code can run on them (all expand);
 * throws naming the first one it cannot: a contract migration, or one whose compatibility the
 * database does not record (written before 0011_rolling_upgrades, or by hand).
 */
export function newerMigrations(applied: readonly AppliedMigration[], migrations: readonly Migration[]): AppliedMigration[] {
  const known = new Set(migrations.map((m) => m.version));
  const newer = applied.filter((a) => !known.has(a.version)).sort((x, y) => x.version - y.version);
  const blocking = newer.find((a) => a.compat !== 'expand');
  if (blocking) throw new Error(`${cannotRunOn(blocking, migrations.length)}; it was written by a newer version: refusing to start`);
  return newer;
}

/** Why code that knows migrations up to `knownUpTo` cannot run on the database's migration `blocking` (not expand). */
export function cannotRunOn(blocking: AppliedMigration, knownUpTo: number): string {
  const what = blocking.compat === 'contract' ? 'a contract migration: code before it no longer works' : 'a migration that does not say whether code before it still works';
  return `database schema has migration ${label(blocking)} that this code does not know (it knows up to ${knownUpTo}), ${what}`;
}

/** The log line of an instance accepting a newer schema. */
export function newerSchemaMessage(newer: readonly AppliedMigration[], migrations: readonly Migration[]): string {
  return `database schema has newer migrations this code does not know (it knows up to ${migrations.length}): ${newer.map(label).join(', ')}; all are expand migrations, which code before them works with: starting`;
}

/** Each migration's name and compatibility, as recorded in schema_migrations. */
export function compatRecords(migrations: readonly Migration[]): { versions: number[]; names: string[]; compats: Compat[] } {
  return { versions: migrations.map((m) => m.version), names: migrations.map((m) => m.name.replace(/\.sql$/, '')), compats: migrations.map((m) => m.compat) };
}
