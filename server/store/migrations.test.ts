import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SHARED_FROM, compatKey, loadMigrationFiles, unsharedMigrations, type Migration } from './migrations.ts';
import { loadMigrations as sqliteMigrations } from './sqlite/migrate.ts';
import { loadMigrations as postgresMigrations } from './postgres/migrate.ts';

const m = (version: number, name: string): Migration => ({ version, name: `${String(version).padStart(4, '0')}_${name}.sql`, sql: '', compat: 'expand' });

describe('migrations of the two stores', () => {
  it('share numbers and names from SHARED_FROM on, and both reach the one before it', () => {
    const [sqlite, postgres] = [sqliteMigrations(), postgresMigrations()];
    expect(unsharedMigrations(sqlite, postgres)).toEqual([]);
    expect(sqlite.length).toBe(postgres.length);
    expect(sqlite.length).toBeGreaterThanOrEqual(SHARED_FROM - 1);
  });

  it('name a migration one store lacks, or names differently', () => {
    const base = [m(1, 'init'), m(SHARED_FROM, 'orders_label')];
    expect(unsharedMigrations(base, [m(1, 'other'), m(SHARED_FROM, 'orders_label')])).toEqual([]);
    expect(unsharedMigrations(base, [m(1, 'init'), m(SHARED_FROM, 'order_label')])).toEqual([`000${SHARED_FROM}_order_label.sql`, `000${SHARED_FROM}_orders_label.sql`]);
    expect(unsharedMigrations(base, [m(1, 'init')])).toEqual([`000${SHARED_FROM}_orders_label.sql`]);
  });
});

describe('compat.json: every migration says expand or contract', () => {
  it('classifies every migration of both stores, and the database records the class under the same name', () => {
    for (const ms of [sqliteMigrations(), postgresMigrations()]) {
      expect(ms.every((x) => x.compat === 'expand' || x.compat === 'contract')).toBe(true);
      // The ones that drop or redefine what older code reads: 0003/0004 (amount), 0005/0006 (lease columns).
      expect(ms.filter((x) => x.compat === 'contract' && x.version > 1).map((x) => compatKey(x.name))).toEqual(['transactions_amount_asset_units', 'delivery_leases']);
    }
  });

  it('refuses a migration without an entry, and an entry without a migration', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'compat-'));
    try {
      writeFileSync(path.join(dir, '0001_init.sql'), '-- init');
      writeFileSync(path.join(dir, 'compat.json'), JSON.stringify({}));
      expect(() => loadMigrationFiles(pathToFileURL(`${dir}/`))).toThrow(/compat.json has no entry "init"/);
      writeFileSync(path.join(dir, 'compat.json'), JSON.stringify({ init: { compat: 'contract', why: 'first' }, gone: { compat: 'expand', why: 'x' } }));
      expect(() => loadMigrationFiles(pathToFileURL(`${dir}/`))).toThrow(/names migrations that do not exist: gone/);
      writeFileSync(path.join(dir, 'compat.json'), JSON.stringify({ init: { compat: 'maybe', why: 'first' } }));
      expect(() => loadMigrationFiles(pathToFileURL(`${dir}/`))).toThrow(/init must be "expand" or "contract"/);
      writeFileSync(path.join(dir, 'compat.json'), JSON.stringify({ init: { compat: 'contract', why: 'first' } }));
      expect(loadMigrationFiles(pathToFileURL(`${dir}/`))).toEqual([{ version: 1, name: '0001_init.sql', sql: '-- init', compat: 'contract' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
