// Rolling upgrades on PostgreSQL (issue 60): what the database records of each migration, an
// instance on a newer schema (accepted when all expand, refused by name otherwise), contract
// migrations held back while an instance running older code is alive, and the heartbeat that
// says so (its timer under fake timers and a fake clock).
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { migrateCommand } from '../../admin/upgrade.ts';
import { FakeTimers } from '../../delivery/testing.ts';
import type { Migration } from '../migrations.ts';
import { heartbeatPool, registerInstance } from './heartbeat.ts';
import { BEAT_RETRY_MS, DB_NOW_MS, HEARTBEAT_MS, INSTANCE_TTL_MS, LEASE_MS, liveInstances } from './instances.ts';
import { MIGRATION_LOCK, assertKnownSchema, loadMigrations, migrate, migrateSchema } from './migrate.ts';
import { until } from '../../../testing/until.ts';
import { openPostgresStore } from './store.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';

const T0 = 1_780_000_000_000;
const MIGRATIONS = loadMigrations();
const NEXT = MIGRATIONS.length + 1;

/** A migration of a release after this one. */
const later = (compat: Migration['compat'], slug: string, sql: string): Migration => ({ version: NEXT, name: `${String(NEXT).padStart(4, '0')}_${slug}.sql`, sql, compat });

function capture(): { log: Logger; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  return { lines, log: pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as { level: number; msg: string }) }) };
}

describe('rolling upgrades on PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  const pools: pg.Pool[] = [];
  const database = async (): Promise<pg.Pool> => {
    const db = await createTestDatabase();
    databases.push(db);
    const pool = new pg.Pool({ connectionString: db.url, max: 3 });
    pool.on('error', () => undefined);
    pools.push(pool);
    return pool;
  };
  const urlOf = (pool: pg.Pool): string => (pool.options as { connectionString: string }).connectionString;
  /** An instance row as a server's heartbeat writes it, beating now (the database's clock). */
  const instanceRow = (pool: pg.Pool, id: string, codeVersion: number) =>
    pool.query(`INSERT INTO instances (id, code_version, release, host, pid, started_at, heartbeat_at) SELECT $1, $2, 'test', 'host-a', 1, t.ms, t.ms FROM (SELECT ${DB_NOW_MS} AS ms) t`, [id, codeVersion]);
  /** Every instance's last beat `ms` further in the past, as if that long went by on the database's clock without one. */
  const age = (pool: pg.Pool, ms: number) => pool.query('UPDATE instances SET heartbeat_at = heartbeat_at - $1', [ms]);
  const heartbeats = async (pool: pg.Pool): Promise<number[]> => (await pool.query<{ at: string }>('SELECT heartbeat_at AS at FROM instances ORDER BY id')).rows.map((r) => Number(r.at));

  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end().catch(() => undefined)));
    await Promise.all(databases.splice(0).map((d) => d.drop()));
  });

  it('records every migration with its name and compatibility, those applied before 0011 included', async () => {
    const pool = await database();
    await migrate(pool, MIGRATIONS.filter((m) => m.version < 5));
    await migrate(pool);
    const rows = (await pool.query<{ version: number; name: string; compat: string }>('SELECT version, name, compat FROM schema_migrations ORDER BY version')).rows;
    expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name.replace(/\.sql$/, ''), compat: m.compat })));
    expect(rows.find((r) => r.name === '0005_delivery_leases')?.compat).toBe('contract');
  });

  it('starts on a schema whose newer migrations are all expand, and says so in its log', async () => {
    const pool = await database();
    await migrate(pool);
    const newer = later('expand', 'orders_label', 'ALTER TABLE orders ADD COLUMN label TEXT');
    await migrate(pool, [...MIGRATIONS, newer]);
    const { log, lines } = capture();
    await expect(assertKnownSchema(pool, MIGRATIONS, log)).resolves.toHaveLength(NEXT);
    expect(lines.map((l) => l.msg)).toEqual([expect.stringContaining(`newer migrations this code does not know (it knows up to ${MIGRATIONS.length}): ${newer.name.replace(/\.sql$/, '')}; all are expand`)]);
    // The store of this code opens and migrates (nothing to do) on it.
    const store = await openPostgresStore({ connectionString: urlOf(pool), log: pino({ level: 'silent' }) });
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
  });

  it('refuses a schema with a newer contract migration, naming it', async () => {
    const pool = await database();
    await migrate(pool);
    await migrate(pool, [...MIGRATIONS, later('contract', 'drop_orders_review_reason', 'ALTER TABLE orders DROP COLUMN review_reason')]);
    const named = new RegExp(`migration ${String(NEXT).padStart(4, '0')}_drop_orders_review_reason .*a contract migration.*refusing to start`);
    await expect(openPostgresStore({ connectionString: urlOf(pool), log: pino({ level: 'silent' }) })).rejects.toThrow(named);
    await expect(migrate(pool)).rejects.toThrow(named);
  });

  it('holds a contract migration back while an instance running older code is alive; --contract refuses, naming it', async () => {
    const pool = await database();
    await migrate(pool);
    const contract = later('contract', 'drop_orders_review_reason', 'ALTER TABLE orders DROP COLUMN review_reason');
    const all = [...MIGRATIONS, contract];
    await instanceRow(pool, 'old-instance', MIGRATIONS.length);
    await instanceRow(pool, 'new-instance', NEXT);
    const { log, lines } = capture();
    const held = await migrateSchema(pool, all, { now: () => T0 + 1_000, log });
    expect(held.applied).toEqual([]);
    expect(held.deferred?.migration).toBe(contract.name);
    expect(held.deferred?.olderInstances.map((i) => i.id)).toEqual(['old-instance']);
    expect(lines.map((l) => l.msg)).toEqual([expect.stringMatching(/contract migration .*drop_orders_review_reason.* waits: .*old-instance.*migrate --contract/)]);
    await expect(migrateSchema(pool, all, { mode: 'contract', now: () => T0 + 1_000, log })).rejects.toThrow(/contract migration .*drop_orders_review_reason.* would break .*old-instance/);

    // The admin command says the same.
    const config = loadConfig({ DATABASE_URL: urlOf(pool), SECRETS_KEY: Buffer.alloc(32, 1).toString('base64url'), NODE_ENV: 'test' });
    await expect(migrateCommand(config, true, all)).rejects.toThrow(/would break instances still running older code: old-instance/);
    expect((await pool.query('SELECT count(*)::int AS n FROM schema_migrations WHERE version = $1', [NEXT])).rows[0]).toEqual({ n: 0 });

    // Once its heartbeat is older than the TTL it is dead: the migration goes in.
    await age(pool, INSTANCE_TTL_MS);
    const done = await migrateSchema(pool, all, { mode: 'contract', now: () => T0 + 2_000, log });
    expect(done).toMatchObject({ applied: [NEXT], deferred: null });
  });

  it('registers a heartbeat refreshed on its timer, dead after the TTL without one, removed at a clean stop', async () => {
    const pool = await database();
    await migrate(pool);
    const timers = new FakeTimers();
    const own = heartbeatPool(urlOf(pool));
    const hb = await registerInstance({ pool: own, log: pino({ level: 'silent' }), timers, id: 'instance-a', release: 'r1' });
    expect((await liveInstances(pool)).map((i) => [i.id, i.codeVersion])).toEqual([['instance-a', MIGRATIONS.length]]);
    expect(timers.delays()).toEqual([HEARTBEAT_MS]);

    await age(pool, HEARTBEAT_MS);
    const [before] = await heartbeats(pool);
    timers.fireAll();
    // The next beat is set once this one is written, on the database's clock.
    await expect.poll(() => timers.delays()).toEqual([HEARTBEAT_MS]);
    expect((await heartbeats(pool))[0]).toBeGreaterThanOrEqual(before! + HEARTBEAT_MS);
    // Without another beat it is dead after the TTL.
    await age(pool, INSTANCE_TTL_MS - 5_000);
    expect(await liveInstances(pool)).toHaveLength(1);
    await age(pool, 5_000);
    expect(await liveInstances(pool)).toEqual([]);

    await hb.stop();
    expect(timers.delays()).toEqual([]);
    expect((await pool.query('SELECT count(*)::int AS n FROM instances')).rows[0]).toEqual({ n: 0 });
  });

  it('judges liveness by the database clock: host clocks an hour apart neither kill a live instance nor keep a dead one alive', async () => {
    const pool = await database();
    await migrate(pool);
    const all = [...MIGRATIONS, later('contract', 'drop_orders_review_reason', 'ALTER TABLE orders DROP COLUMN review_reason')];
    const HOUR = 60 * 60 * 1000;
    // A live instance whose host clock runs an hour behind the migrator's.
    const behind = await registerInstance({ pool: heartbeatPool(urlOf(pool)), log: pino({ level: 'silent' }), timers: new FakeTimers(), now: () => Date.now() - HOUR, id: 'behind', release: 'r1' });
    await expect(migrateSchema(pool, all, { mode: 'contract', now: () => Date.now() + HOUR, log: pino({ level: 'silent' }) })).rejects.toThrow(/would break .*behind/);
    await behind.stop();
    // A dead instance (it stopped beating, its row left) whose host clock ran an hour ahead:
    // dead once the window has passed on the database's clock (a short window here).
    const ahead = await registerInstance({ pool: heartbeatPool(urlOf(pool)), log: pino({ level: 'silent' }), timers: new FakeTimers(), now: () => Date.now() + HOUR, id: 'ahead', release: 'r1' });
    await until(async () => (await liveInstances(pool, 200)).length === 0, 'the instance that stopped beating dead after 200 ms on the database clock');
    await expect(migrateSchema(pool, all, { mode: 'contract', now: () => Date.now() - HOUR, ttlMs: 200, log: pino({ level: 'silent' }) })).resolves.toMatchObject({ applied: [NEXT] });
    await ahead.stop();
  });

  it('serves while its last confirmed beat was sent less than LEASE_MS ago on its own clock, and again once a beat (beatNow too) is confirmed', async () => {
    const pool = await database();
    await migrate(pool);
    const timers = new FakeTimers();
    let host = T0;
    const hb = await registerInstance({ pool: heartbeatPool(urlOf(pool)), log: pino({ level: 'silent' }), timers, now: () => host, id: 'instance-a', release: 'r1' });
    host = T0 + LEASE_MS - 1;
    expect(hb.notServing()).toBeNull();
    // Its beats late (a long pause, or the database out of reach): the others may soon count it dead.
    host = T0 + LEASE_MS;
    expect(hb.notServing()).toBe('no heartbeat confirmed for 20 s: other instances may count this one dead, and a contract migration may have run');
    // Beating at once (a process continued after a stop) confirms it without waiting for the
    // timer, which is set again from this beat; the lease runs from when the beat was sent.
    hb.beatNow();
    await expect.poll(() => hb.notServing()).toBeNull();
    await expect.poll(() => timers.delays()).toEqual([HEARTBEAT_MS]);
    host = T0 + 2 * LEASE_MS - 1;
    expect(hb.notServing()).toBeNull();
    host = T0 + 2 * LEASE_MS;
    expect(hb.notServing()).not.toBeNull();
    await hb.stop();
  });

  it('an instance paused past the window that resumes after a contract migration ran does not beat again: it is told to stop, naming the migration', async () => {
    const pool = await database();
    await migrate(pool);
    const timers = new FakeTimers();
    let host = T0;
    const refusals: string[] = [];
    const hb = await registerInstance({ pool: heartbeatPool(urlOf(pool)), log: pino({ level: 'silent' }), timers, now: () => host, id: 'paused', release: 'r1', onSchemaRefused: (err) => refusals.push(err.message) });
    expect(hb.notServing()).toBeNull();
    // Paused: its beats stop (its timer does not fire) for longer than the window, on both clocks.
    await age(pool, INSTANCE_TTL_MS);
    host += INSTANCE_TTL_MS;
    const contract = later('contract', 'drop_orders_review_reason', 'ALTER TABLE orders DROP COLUMN review_reason');
    await expect(migrateSchema(pool, [...MIGRATIONS, contract], { mode: 'contract', log: pino({ level: 'silent' }) })).resolves.toMatchObject({ applied: [NEXT] });
    // It resumes: before any beat it knows it may be counted dead, and does not serve.
    expect(hb.notServing()).toMatch(/no heartbeat confirmed for 30 s/);
    // Its next beat finds the migration, writes nothing and sets no further beat.
    timers.fireAll();
    await expect.poll(() => refusals).toEqual([expect.stringMatching(/migration 00\d\d_drop_orders_review_reason that this code does not know .*a contract migration.*stopping/)]);
    expect(hb.notServing()).toBe(refusals[0]);
    expect(timers.delays()).toEqual([]);
    expect(await liveInstances(pool)).toEqual([]);
    await hb.stop();
    expect((await pool.query('SELECT count(*)::int AS n FROM instances')).rows[0]).toEqual({ n: 0 });
  });

  it('a beat at the moment a contract migration commits: the migration holds the rows it judged, and the beat then sees it', async () => {
    const pool = await database();
    await migrate(pool);
    const timers = new FakeTimers();
    const refusals: string[] = [];
    const hb = await registerInstance({ pool: heartbeatPool(urlOf(pool)), log: pino({ level: 'silent' }), timers, id: 'late', release: 'r1', onSchemaRefused: (err) => refusals.push(err.message) });
    await age(pool, INSTANCE_TTL_MS);
    // The migration's transaction (as migrateSchema runs it) has judged the row and holds it.
    const migrator = await pool.connect();
    try {
      await migrator.query('BEGIN');
      await migrator.query('SELECT id FROM instances WHERE code_version < $1 FOR UPDATE', [NEXT]);
      await migrator.query('ALTER TABLE orders DROP COLUMN review_reason');
      await migrator.query("INSERT INTO schema_migrations (version, applied_at, name, compat) VALUES ($1, $2, $3, 'contract')", [NEXT, T0, `${String(NEXT).padStart(4, '0')}_drop_orders_review_reason`]);
      timers.fireAll();
      await until(
        async () => (await pool.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'payments-service:heartbeat' AND wait_event_type = 'Lock'")).rowCount === 1,
        'the beat waiting for the row the migration holds',
      );
      await migrator.query('COMMIT');
    } finally {
      migrator.release();
    }
    await expect.poll(() => refusals).toEqual([expect.stringMatching(/drop_orders_review_reason .*a contract migration/)]);
    expect(await liveInstances(pool)).toEqual([]);
    await hb.stop();
  });

  it('a contract migration at the moment an older instance beats: it waits for the beat, then counts the instance alive', async () => {
    const pool = await database();
    await migrate(pool);
    await instanceRow(pool, 'old-instance', MIGRATIONS.length);
    await age(pool, INSTANCE_TTL_MS);
    // The old instance's beat, in its transaction, not committed yet.
    const beating = await pool.connect();
    try {
      await beating.query('BEGIN');
      await beating.query(`UPDATE instances SET heartbeat_at = ${DB_NOW_MS} WHERE id = 'old-instance'`);
      const contract = later('contract', 'drop_orders_review_reason', 'ALTER TABLE orders DROP COLUMN review_reason');
      const outcome = migrateSchema(pool, [...MIGRATIONS, contract], { mode: 'contract', log: pino({ level: 'silent' }) }).then(
        () => 'applied',
        (err: Error) => err.message,
      );
      await until(async () => (await pool.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'")).rowCount === 1, 'the migration waiting for the beat');
      await beating.query('COMMIT');
      expect(await outcome).toMatch(/would break .*old-instance/);
    } finally {
      beating.release();
    }
    expect((await pool.query('SELECT count(*)::int AS n FROM schema_migrations WHERE version = $1', [NEXT])).rows[0]).toEqual({ n: 0 });
  });

  it('refuses to register on a schema with a newer contract migration', async () => {
    const pool = await database();
    await migrate(pool, [...MIGRATIONS, later('contract', 'drop_orders_review_reason', 'ALTER TABLE orders DROP COLUMN review_reason')]);
    const own = heartbeatPool(urlOf(pool));
    pools.push(own);
    await expect(registerInstance({ pool: own, log: pino({ level: 'silent' }), timers: new FakeTimers(), id: 'old' })).rejects.toThrow(/drop_orders_review_reason/);
    expect((await pool.query('SELECT count(*)::int AS n FROM instances')).rows[0]).toEqual({ n: 0 });
  });

  it('registering waits for a migration in progress, then refuses the contract migration it brought', async () => {
    const pool = await database();
    await migrate(pool);
    // A newer release applying a contract migration holds the migration lock.
    const migrator = await pool.connect();
    try {
      await migrator.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const own = heartbeatPool(urlOf(pool));
      pools.push(own);
      const registering = registerInstance({ pool: own, log: pino({ level: 'silent' }), timers: new FakeTimers(), id: 'old' });
      const outcome = registering.then(
        () => 'registered',
        (err: Error) => err.message,
      );
      // Waiting on the lock: its session shows the advisory lock wait.
      await until(
        async () => (await pool.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'payments-service:heartbeat' AND wait_event = 'advisory'")).rowCount === 1,
        'the registration waiting for the migration lock',
      );
      await migrator.query('BEGIN');
      await migrator.query(later('contract', 'drop_orders_review_reason', 'ALTER TABLE orders DROP COLUMN review_reason').sql);
      await migrator.query("INSERT INTO schema_migrations (version, applied_at, name, compat) VALUES ($1, $2, $3, 'contract')", [NEXT, T0, `${String(NEXT).padStart(4, '0')}_drop_orders_review_reason`]);
      await migrator.query('COMMIT');
      await migrator.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      expect(await outcome).toMatch(/drop_orders_review_reason .*a contract migration/);
      expect((await pool.query('SELECT count(*)::int AS n FROM instances')).rows[0]).toEqual({ n: 0 });
    } finally {
      migrator.release();
    }
  });

  it("a heartbeat connection reset while it is checked out between statements is heard (not an 'error' nobody listens to, which ends the process), and the next beat opens another", async () => {
    const pool = await database();
    const own = heartbeatPool(urlOf(pool));
    const held = await own.connect();
    const { pid } = (await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
    const ended = new Promise((resolve) => held.once('end', resolve));
    // The server ends the connection while no query runs on it (a reset the fault proxy makes).
    await pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await ended;
    held.release(true);
    expect((await own.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await own.end();
  });

  it('a beat that fails is logged once and tried again after BEAT_RETRY_MS until one writes it, then every HEARTBEAT_MS', async () => {
    const pool = await database();
    await migrate(pool);
    const timers = new FakeTimers();
    const { log, lines } = capture();
    const hb = await registerInstance({ pool: heartbeatPool(urlOf(pool)), log, timers, id: 'instance-a', release: 'r1' });
    // Dead to the others by the time the beats come back.
    await age(pool, INSTANCE_TTL_MS);
    // The table out of reach (as a database refusing writes would be): the beats fail.
    await pool.query('ALTER TABLE instances RENAME TO instances_away');
    for (let step = 1; step <= 2; step++) {
      timers.fireAll();
      // Sooner than the next tick: a lapsed lease (503s) lasts no longer than the outage.
      await expect.poll(() => timers.delays()).toEqual([BEAT_RETRY_MS]);
    }
    await pool.query('ALTER TABLE instances_away RENAME TO instances');
    expect(await liveInstances(pool)).toEqual([]);
    timers.fireAll();
    await expect.poll(async () => (await liveInstances(pool)).map((i) => i.id)).toEqual(['instance-a']);
    await expect.poll(() => timers.delays()).toEqual([HEARTBEAT_MS]);
    await expect.poll(() => lines.map((l) => l.msg).filter((m) => m.startsWith('heartbeat'))).toEqual(['heartbeat not written', 'heartbeat written again']);
    await hb.stop();
  });
});
