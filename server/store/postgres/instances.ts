// The instances serving one PostgreSQL database, as their heartbeat rows say (table instances,
// migration 0011): each one's id, the last migration its code knows (code_version: a higher one
// is newer code), and when it last said it was alive. A row whose heartbeat is older than the
// TTL is a dead instance's (killed, or cut off from the database): it blocks nothing.
//
// Every time here is the database's clock (clock_timestamp(), in ms since the epoch): the
// beat and the look that judges it read the same clock, so hosts whose clocks disagree
// neither kill a live instance nor keep a dead one alive (issue 70).
import type pg from 'pg';
import type { AppliedMigration } from '../migrations.ts';

/** How often a serving instance refreshes its row. */
export const HEARTBEAT_MS = 10_000;
/** A failed beat is tried again this soon (not at the next tick), so a lapsed lease ends soon after an outage. */
export const BEAT_RETRY_MS = 1_000;
/** A heartbeat older than this is a dead instance's: three missed beats. */
export const INSTANCE_TTL_MS = 30_000;
/**
 * An instance serves while its last confirmed beat was sent less than this long ago, on its
 * own clock (only ever compared with itself): it stops before the others may count it dead,
 * whatever the hosts' clocks say, with a beat's interval to spare.
 */
export const LEASE_MS = INSTANCE_TTL_MS - HEARTBEAT_MS;

/** An instance's row: who it is, and when it last said it was alive. */
export interface InstanceRow extends InstanceIdentity {
  startedAt: number;
  heartbeatAt: number;
}

/** The database's clock, in ms since the epoch (the columns' unit), as SQL. */
export const DB_NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

const COLUMNS = 'id, code_version AS "codeVersion", release, host, pid, started_at AS "startedAt", heartbeat_at AS "heartbeatAt"';

async function hasInstancesTable(db: pg.Pool | pg.PoolClient): Promise<boolean> {
  const r = await db.query<{ present: boolean }>("SELECT to_regclass('instances') IS NOT NULL AS present");
  return r.rows[0]?.present === true;
}

/** The instances alive now on the database's clock (none before migration 0011), oldest code first. */
export async function liveInstances(db: pg.Pool | pg.PoolClient, ttlMs: number = INSTANCE_TTL_MS): Promise<InstanceRow[]> {
  if (!(await hasInstancesTable(db))) return [];
  const r = await db.query<InstanceRow>(`SELECT ${COLUMNS} FROM instances WHERE heartbeat_at > ${DB_NOW_MS} - $1 ORDER BY code_version, started_at`, [ttlMs]);
  return r.rows.map((row) => ({ ...row, startedAt: Number(row.startedAt), heartbeatAt: Number(row.heartbeatAt) }));
}

/**
 * In a contract migration's transaction: holds the rows of instances whose code predates
 * `version` until it commits, so that a beat of theirs either committed before (and is seen
 * alive by the look that follows) or waits, then sees the migration (beatChecked).
 */
export async function holdOlderInstances(client: pg.PoolClient, version: number): Promise<void> {
  if (await hasInstancesTable(client)) await client.query('SELECT id FROM instances WHERE code_version < $1 FOR UPDATE', [version]);
}

/** The live instances whose code predates migration `version` (a contract migration would break them). */
export async function olderLiveInstances(db: pg.Pool | pg.PoolClient, version: number, ttlMs: number = INSTANCE_TTL_MS): Promise<InstanceRow[]> {
  return (await liveInstances(db, ttlMs)).filter((i) => i.codeVersion < version);
}

/** What an instance says of itself in its row (the database stamps started_at and heartbeat_at). */
export interface InstanceIdentity {
  id: string;
  codeVersion: number;
  release: string;
  host: string;
  pid: number;
}

/**
 * Inserts or refreshes the instance's row (started_at is set on insert), unless the database
 * has a migration newer than the instance's code that is not expand: then writes nothing and
 * returns that migration. One statement, so no beat refreshes a row over such a migration.
 */
export async function beat(db: pg.Pool | pg.PoolClient, me: InstanceIdentity): Promise<AppliedMigration | null> {
  const r = await db.query<{ version: number | null; name: string | null; compat: AppliedMigration['compat'] }>(
    `WITH blocking AS (
       SELECT version, name, compat FROM schema_migrations WHERE version > $2 AND compat IS DISTINCT FROM 'expand' ORDER BY version LIMIT 1
     ), written AS (
       INSERT INTO instances (id, code_version, release, host, pid, started_at, heartbeat_at)
       SELECT $1, $2, $3, $4, $5, t.ms, t.ms FROM (SELECT ${DB_NOW_MS} AS ms) t WHERE NOT EXISTS (SELECT 1 FROM blocking)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at
     )
     SELECT b.version, b.name, b.compat FROM (SELECT 1) one LEFT JOIN blocking b ON true`,
    [me.id, me.codeVersion, me.release, me.host, me.pid],
  );
  const row = r.rows[0];
  return row?.version == null ? null : { version: row.version, name: row.name, compat: row.compat };
}

/**
 * A serving instance's beat: waits while a contract migration holds its row (holdOlderInstances),
 * then checks and writes in a statement that sees that migration. `held` is false when the row
 * was gone (forgotten after a long death): no migration could hold it, so this beat proves
 * nothing about one committing now.
 */
export async function beatChecked(pool: pg.Pool, me: InstanceIdentity): Promise<{ blocking: AppliedMigration | null; held: boolean }> {
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    await client.query('BEGIN');
    const held = ((await client.query('SELECT 1 FROM instances WHERE id = $1 FOR UPDATE', [me.id])).rowCount ?? 0) > 0;
    const blocking = await beat(client, me);
    await client.query('COMMIT');
    return { blocking, held };
  } catch (err) {
    failed = err as Error;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    // A connection that failed is dropped, not pooled.
    client.release(failed);
  }
}

/** Removes the instance's row (a clean shutdown), and rows dead for longer than `forgetMs` (anyone's). */
export async function forget(db: pg.Pool | pg.PoolClient, id: string | null, forgetMs: number): Promise<void> {
  await db.query(`DELETE FROM instances WHERE id = $1 OR heartbeat_at < ${DB_NOW_MS} - $2`, [id, forgetMs]);
}
