// The private fields of pg and pg-pool the store relies on, in one place: a client's socket
// (destroyed to end a query to a silent host at once) and a pool's clients, idle and all
// (dropped together after a fail-over, and at close). Neither library offers these publicly.
// A release that renamed them would make every use here quietly do nothing and bring back the
// hangs the deadlines end, so the store checks them on a real pool when it opens
// (assertPgInternals) and refuses to start, naming the installed versions.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type pg from 'pg';

interface Wire {
  connection?: { stream?: { destroy?(err?: Error): void } };
}

interface PoolInternals {
  _clients?: pg.PoolClient[];
  _idle?: { client: pg.PoolClient }[];
}

/** Destroys a client's socket: its pending queries fail at once, and the pool never reuses it. */
export function destroyConnection(client: pg.Client | pg.PoolClient, err: Error): void {
  (client as unknown as Wire).connection?.stream?.destroy?.(err);
}

/** Every client of a pool, idle or checked out (pg-pool keeps them in _clients). */
export function allClients(pool: pg.Pool): pg.PoolClient[] {
  return [...((pool as unknown as PoolInternals)._clients ?? [])];
}

/** The pool's idle clients. */
export function idleClients(pool: pg.Pool): pg.PoolClient[] {
  return ((pool as unknown as PoolInternals)._idle ?? []).map((i) => i.client);
}

/** Throws, naming the pg and pg-pool versions, unless `pool` (which has opened a connection) has the fields above. */
export function assertPgInternals(pool: pg.Pool): void {
  const p = pool as unknown as PoolInternals;
  const missing: string[] = [];
  if (!Array.isArray(p._clients)) missing.push('Pool._clients');
  if (!Array.isArray(p._idle) || p._idle.some((i) => typeof i?.client !== 'object')) missing.push('Pool._idle[].client');
  const client = p._clients?.[0] ?? p._idle?.[0]?.client;
  if (typeof (client as Wire | undefined)?.connection?.stream?.destroy !== 'function') missing.push('Client.connection.stream.destroy');
  if (missing.length === 0) return;
  const { pg: pgVersion, pool: poolVersion } = installedVersions();
  throw new Error(
    `pg ${pgVersion} (pg-pool ${poolVersion}) lacks private fields the PostgreSQL store relies on (${missing.join(', ')}): ` +
      'without them a connection to a silent host is never destroyed. Install the pg version of package-lock.json, or adapt server/store/postgres/pg-internals.ts.',
  );
}

function installedVersions(): { pg: string; pool: string } {
  const require = createRequire(import.meta.url);
  const versionAt = (main: string): string => {
    try {
      return (JSON.parse(readFileSync(path.join(path.dirname(main), 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      return 'of unknown version';
    }
  };
  const pgMain = require.resolve('pg');
  return { pg: versionAt(path.dirname(pgMain)), pool: versionAt(createRequire(pgMain).resolve('pg-pool')) };
}
