// npm run admin -- migrate [--contract] and npm run admin -- instances: the steps of a rolling
// upgrade (docs/operations.md, "Upgrading"). On PostgreSQL, `migrate` applies what a plain
// start would (a contract migration waits while an instance running older code is alive);
// `migrate --contract` applies everything and refuses, naming them, while such instances live.
// On SQLite one process serves the database: both apply every pending migration.
import pg from 'pg';
import { pino } from 'pino';
import type { Config } from '../config.ts';
import { openServices } from '../services.ts';
import { liveInstances, type InstanceRow } from '../store/postgres/instances.ts';
import { loadMigrations as postgresMigrations, migrateSchema, type Migration } from '../store/postgres/migrate.ts';
import { loadMigrations as sqliteMigrations } from '../store/sqlite/migrate.ts';

const silent = pino({ level: 'silent' });

async function withPool<T>(databaseUrl: string, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, connectionTimeoutMillis: 5_000, application_name: 'payments-admin' });
  pool.on('error', () => undefined);
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

const nameOf = (version: number, names: readonly { version: number; name: string }[]): string =>
  names.find((m) => m.version === version)?.name.replace(/\.sql$/, '') ?? `version ${version}`;

/** Applies pending migrations; with contract, contract ones too, refusing while older instances are alive. */
export async function migrateCommand(config: Config, contract: boolean, migrations: readonly Migration[] = postgresMigrations()): Promise<unknown> {
  if (!config.databaseUrl) {
    // One process serves a SQLite database: the server applies everything at start, as this does.
    const { services } = await openServices(config, silent);
    await services.store.close();
    return { store: 'sqlite', schema: sqliteMigrations().length, note: 'every pending migration applied (one process serves a SQLite database)' };
  }
  return withPool(config.databaseUrl, async (pool) => {
    const outcome = await migrateSchema(pool, migrations, { mode: contract ? 'contract' : 'start', log: silent });
    return {
      store: 'postgres',
      applied: outcome.applied.map((v) => nameOf(v, migrations)),
      ...(outcome.deferred
        ? { waiting: outcome.deferred.migration.replace(/\.sql$/, ''), olderInstances: outcome.deferred.olderInstances.map(describe), next: 'upgrade or stop those instances, then: npm run admin -- migrate --contract' }
        : {}),
      newerThanThisCode: outcome.newer.map((m) => m.name ?? `version ${m.version}`),
    };
  });
}

const describe = (i: InstanceRow): Record<string, unknown> => ({
  id: i.id,
  codeVersion: i.codeVersion,
  release: i.release,
  host: i.host,
  pid: i.pid,
  lastHeartbeat: new Date(i.heartbeatAt).toISOString(),
});

/** The instances alive on the database, with the last migration each one's code knows. */
export async function instancesCommand(config: Config): Promise<unknown> {
  if (!config.databaseUrl) return { store: 'sqlite', instances: [], note: 'one process serves a SQLite database; instances register on PostgreSQL only' };
  const known = postgresMigrations().length;
  return withPool(config.databaseUrl, async (pool) => {
    const live = await liveInstances(pool);
    return { store: 'postgres', thisCodeKnows: known, instances: live.map((i) => ({ ...describe(i), older: i.codeVersion < known })) };
  });
}
