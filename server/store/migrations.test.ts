import { describe, expect, it } from 'vitest';
import { SHARED_FROM, unsharedMigrations, type Migration } from './migrations.ts';
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
