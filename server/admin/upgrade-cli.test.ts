// npm run admin -- migrate [--contract] and instances, run as the operator runs them
// (docs/operations.md, "Upgrading"), on a fresh PostgreSQL database.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../store/postgres/migrate.ts';
import { DB_NOW_MS } from '../store/postgres/instances.ts';
import { createTestDatabase, type TestDatabase } from '../store/postgres/testing.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let db: TestDatabase;

const admin = async (...args: string[]): Promise<{ code: number; out: unknown; stderr: string }> => {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: db.url, SECRETS_KEY: Buffer.alloc(32, 7).toString('base64url') };
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT, 'server/admin/cli.ts'), ...args], { cwd: ROOT, env, timeout: 25_000 });
    return { code: 0, out: JSON.parse(stdout) as unknown, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout, stderr: err.stderr };
  }
};

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

describe('npm run admin -- migrate / instances (PostgreSQL)', () => {
  it('migrates, lists the live instances with whether each runs older code, and has no contract migration left to apply', { timeout: 90_000 }, async () => {
    const names = loadMigrations().map((m) => m.name.replace(/\.sql$/, ''));
    expect(await admin('migrate')).toMatchObject({ code: 0, out: { store: 'postgres', applied: names, newerThanThisCode: [] } });

    const direct = new pg.Client({ connectionString: db.url });
    await direct.connect();
    try {
      // An instance of the release before this one, alive; one dead for a minute.
      // Stamped on the database's clock, as beats are.
      const row = `INSERT INTO instances (id, code_version, release, host, pid, started_at, heartbeat_at) SELECT $1, $2, '0.1.0', 'host-a', 4242, t.ms, t.ms FROM (SELECT ${DB_NOW_MS} - $3 AS ms) t`;
      await direct.query(row, ['older', names.length - 1, 0]);
      await direct.query(row, ['gone', names.length - 1, 60_000]);
    } finally {
      await direct.end();
    }
    const listed = await admin('instances');
    expect(listed).toMatchObject({ code: 0, out: { store: 'postgres', thisCodeKnows: names.length, instances: [{ id: 'older', codeVersion: names.length - 1, host: 'host-a', pid: 4242, older: true }] } });
    expect((listed.out as { instances: unknown[] }).instances).toHaveLength(1);

    // Nothing of this release is contract: --contract applies nothing and refuses nothing.
    expect(await admin('migrate', '--contract')).toMatchObject({ code: 0, out: { applied: [] } });
    expect(await admin('migrate', '--bogus')).toMatchObject({ code: 2 });
  });
});
