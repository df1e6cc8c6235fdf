// A SQLite database after a newer release ran on it (issue 60): this code starts when every
// newer migration is expand, and refuses, naming it, a contract one; every migration is recorded
// with its name and compatibility, those applied before 0011 included.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Migration } from '../migrations.ts';
import { assertKnownSchema, loadMigrations, migrate } from './migrate.ts';
import { openSqliteStore } from './store.ts';

const dir = mkdtempSync(join(tmpdir(), 'store-sqlite-upgrades-'));
let files = 0;
const freshFile = (): string => join(dir, `store-${++files}.sqlite`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MIGRATIONS = loadMigrations();
const NEXT = MIGRATIONS.length + 1;
const later = (compat: Migration['compat'], slug: string, sql: string): Migration => ({ version: NEXT, name: `${String(NEXT).padStart(4, '0')}_${slug}.sql`, sql, compat });

/** A database file migrated with `migrations`, closed. */
function migrated(migrations: readonly Migration[]): string {
  const file = freshFile();
  const db = new Database(file);
  try {
    migrate(db, migrations);
  } finally {
    db.close();
  }
  return file;
}

describe('SQLite schema written by a newer release', () => {
  it('records every migration with its name and compatibility, those applied before 0011 included', () => {
    const db = new Database(freshFile());
    try {
      migrate(db, MIGRATIONS.filter((m) => m.version < 4));
      migrate(db);
      expect(db.prepare('SELECT version, name, compat FROM schema_migrations ORDER BY version').all()).toEqual(
        MIGRATIONS.map((m) => ({ version: m.version, name: m.name.replace(/\.sql$/, ''), compat: m.compat })),
      );
    } finally {
      db.close();
    }
  });

  it('starts on newer expand migrations, saying so in its log', async () => {
    const file = migrated([...MIGRATIONS, later('expand', 'orders_label', 'ALTER TABLE orders ADD COLUMN label TEXT')]);
    const lines: string[] = [];
    const db = new Database(file);
    try {
      assertKnownSchema(db, MIGRATIONS, pino({ level: 'info' }, { write: (s: string) => void lines.push((JSON.parse(s) as { msg: string }).msg) }));
    } finally {
      db.close();
    }
    expect(lines).toEqual([expect.stringContaining(`(it knows up to ${MIGRATIONS.length}): ${String(NEXT).padStart(4, '0')}_orders_label; all are expand`)]);
    const store = await openSqliteStore({ file });
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
  });

  it('refuses a newer contract migration, naming it', async () => {
    const file = migrated([...MIGRATIONS, later('contract', 'drop_orders_review_reason', 'ALTER TABLE orders DROP COLUMN review_reason')]);
    await expect(openSqliteStore({ file })).rejects.toThrow(new RegExp(`migration ${String(NEXT).padStart(4, '0')}_drop_orders_review_reason .*a contract migration.*refusing to start`));
  });
});
