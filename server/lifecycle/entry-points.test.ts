// Every command-line entry point, started as a child process with a bad setting: it must exit
// by itself (nothing left open: no store, no LISTEN connection, no port), non-zero, with a
// clear message. A hang fails the test at its timeout.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../store/postgres/testing.ts';
import { childEntry } from '../testing/server-bundle.ts';
import { startServer } from '../testing/child-server.ts';
import { until } from '../../testing/until.ts';
import { loadMigrations, migrateSchema } from '../store/postgres/migrate.ts';
import { INSTANCE_TTL_MS } from '../store/postgres/instances.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const KEY = randomBytes(32).toString('base64url');
/** Generous: tsx compiles on start on a shared 2-core machine. */
const EXIT_WITHIN_MS = 25_000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  stdout: string;
}

function run(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...childEntry(script), ...args], {
      cwd: ROOT,
      // Only what the test sets: no DATABASE_URL or SECRETS_KEY leaks in from the outside.
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} ${args.join(' ')} did not exit by itself within ${EXIT_WITHIN_MS} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, EXIT_WITHIN_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

let dataDir: string;
let db: TestDatabase;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'entry-points-'));
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('npm run admin (server/admin/cli.ts)', () => {
  const admin = (env: NodeJS.ProcessEnv) => run('server/admin/cli.ts', ['tenant', 'create', '--name', 'X'], { DATA_DIR: dataDir, ...env });

  it('DATABASE_URL without SECRETS_KEY: exit 2 and says so, before opening the database', async () => {
    const r = await admin({ DATABASE_URL: db.url });
    expect(r).toMatchObject({ code: 2, signal: null, stdout: '' });
    expect(r.stderr).toContain('configuration error: SECRETS_KEY is required with DATABASE_URL');
  });

  it('a SECRETS_KEY of the wrong length: exit 2', async () => {
    const r = await admin({ DATABASE_URL: db.url, SECRETS_KEY: 'c2hvcnQ' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SECRETS_KEY must be the base64url of 32 bytes');
  });

  it('an unreachable database: exit 1 naming the connection error', async () => {
    const r = await admin({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing', SECRETS_KEY: KEY });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ECONNREFUSED/);
  });

  it('a database that does not exist: exit 1, the store opened and closed again', async () => {
    const r = await admin({ DATABASE_URL: `${db.url}_missing`, SECRETS_KEY: KEY });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/does not exist/);
  });

  it('good settings on PostgreSQL: the tenant printed, exit 0 (the LISTEN connection closed)', async () => {
    const r = await admin({ DATABASE_URL: db.url, SECRETS_KEY: KEY });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty('tenantId');
  });
});

describe('npm start (server/main.ts)', () => {
  const start = (env: NodeJS.ProcessEnv) => run('server/main.ts', [], { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env });

  it.each([
    [{ DATABASE_URL: db?.url ?? 'postgres://postgres@127.0.0.1:5432/postgres' }, 'SECRETS_KEY is required with DATABASE_URL'],
    [{ PORT: 'eighty' }, 'PORT must be a port number'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must be a postgres:// or postgresql:// URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN must be at least'],
    [{ METRICS_PORT: '99999' }, 'METRICS_PORT must be a port number'],
    [{ NODE_ENV: 'production', WEBHOOK_ALLOW_INSECURE_URLS: 'true' }, 'WEBHOOK_ALLOW_INSECURE_URLS=true is a development setting'],
  ])('%o: exit 2 with "%s"', async (env, message) => {
    const r = await start(env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`configuration error: ${message}`);
  });

  it('a port already taken: exit 1, nothing left open', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const r = await start({ PORT: String((blocker.address() as { port: number }).port) });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/cannot listen: .*EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });

  it('a secret sealed by a key its ring lacks: exit 2 naming the key id, never a key', async () => {
    const own = await createTestDatabase();
    try {
      const r0 = await run('server/admin/cli.ts', ['tenant', 'create', '--name', 'Z'], { DATABASE_URL: own.url, SECRETS_KEY: `k1:${KEY}` });
      expect(r0.code).toBe(0);
      const other = randomBytes(32).toString('base64url');
      const r = await start({ DATABASE_URL: own.url, SECRETS_KEY: `k2:${other}` });
      expect(r.code).toBe(2);
      // The tenant's two callback secrets (test and live).
      expect(r.stderr).toContain('configuration error: 2 sealed secret(s) in the database are sealed by key id k1, which SECRETS_KEY does not hold');
      for (const k of [KEY, other]) expect(r.stderr + r.stdout).not.toContain(k);
    } finally {
      await own.drop();
    }
  });

  it('a schema newer than the code: exit 1 with the reason (the store closed, the port released)', async () => {
    const { Client } = (await import('pg')).default;
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const r0 = await run('server/admin/cli.ts', ['tenant', 'create', '--name', 'Y'], { DATABASE_URL: db.url, SECRETS_KEY: KEY });
      expect(r0.code).toBe(0);
      await client.query('INSERT INTO schema_migrations (version, applied_at) SELECT 9999, applied_at FROM schema_migrations LIMIT 1');
      const r = await start({ DATABASE_URL: db.url, SECRETS_KEY: KEY });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/failed to start/);
    } finally {
      await client.end();
    }
  });

  it('paused past the heartbeat window while a contract migration ran: on resuming, exit 1 naming it, through the shutdown (its row deleted)', async () => {
    const { Pool } = (await import('pg')).default;
    const own = await createTestDatabase();
    const pool = new Pool({ connectionString: own.url, max: 2 });
    const server = await startServer({ env: { DATABASE_URL: own.url, SECRETS_KEY: KEY } });
    try {
      let out = '';
      server.child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
      // Paused (its beats stop) while, on the database's clock, the window passes and a newer
      // release applies a contract migration this code does not know.
      server.child.kill('SIGSTOP');
      await pool.query('UPDATE instances SET heartbeat_at = heartbeat_at - $1', [INSTANCE_TTL_MS]);
      const known = loadMigrations();
      const name = `${String(known.length + 1).padStart(4, '0')}_drop_orders_review_reason.sql`;
      const contract = { version: known.length + 1, name, sql: 'ALTER TABLE orders DROP COLUMN review_reason', compat: 'contract' as const };
      await expect(migrateSchema(pool, [...known, contract], { mode: 'contract' })).resolves.toMatchObject({ applied: [contract.version] });
      server.child.kill('SIGCONT');
      // Continued, it beats at once and finds the migration.
      await until(() => server.child.exitCode !== null || server.child.signalCode !== null, () => `the instance to exit after its next beat; its output: ${out}`, 30_000);
      expect(server.child.exitCode).toBe(1);
      expect(out).toMatch(/"level":50.*database schema has migration \d{4}_drop_orders_review_reason that this code does not know .*a contract migration.*stopping/);
      expect((await pool.query('SELECT count(*)::int AS n FROM instances')).rows[0]).toEqual({ n: 0 });
    } finally {
      server.child.kill('SIGKILL');
      await pool.end();
      await own.drop();
    }
  }, 60_000);
});

describe('the scripts', () => {
  it('npm run mock with a bad MOCK_PORT: exit 2 before starting Prism', async () => {
    const r = await run('scripts/mock.ts', [], { MOCK_PORT: 'x4010' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('MOCK_PORT must be a port number');
  });

  it('npm run bench:delivery with a bad --events: exit 2 before starting a server', async () => {
    const r = await run('scripts/bench/delivery.ts', ['--events', 'many'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--events must be a positive integer');
  });

  it('npm run bench:delivery with a bad --drain-warmup: exit 2 (0 is allowed, a fraction is not)', async () => {
    const r = await run('scripts/bench/delivery.ts', ['--drain-warmup=1.5'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--drain-warmup must be a whole number (0 or more), not 1.5');
  });

  it('npm run bench:api with a bad --connections: exit 2', async () => {
    const r = await run('scripts/bench/api.ts', ['--connections', '0'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--connections must be a positive integer');
  });
});

describe('payments-conformance (conformance/bin.ts)', () => {
  it('a bad --base-url: exit 2 with the option named', async () => {
    const r = await run('conformance/bin.ts', ['api', '--base-url', 'nope'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--base-url is not an absolute URL');
  });

  it('a secret from an unset environment variable: non-zero, named', async () => {
    const r = await run('conformance/bin.ts', ['receiver', '--url', 'http://127.0.0.1:1/hook', '--secret', 'env:PAYMENTS_TEST_UNSET_SECRET'], {});
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('PAYMENTS_TEST_UNSET_SECRET');
  });
});
