// One pruner at a time on PostgreSQL: while another session holds the pruning lock (another
// instance's batch), a batch does nothing and says so; once it is free, the batch runs. A
// batch with its own statement bound (PRUNE_STATEMENT_TIMEOUT) outlives the API's.
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { T0, deliveryRecord, eventRecord, seedEnvironment } from '../suite/fixtures.ts';
import { PRUNE_LOCK } from './prune.ts';
import { openPostgresStore, type PostgresStore } from './store.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';

let db: TestDatabase;
let store: PostgresStore;

beforeAll(async () => {
  db = await createTestDatabase();
  store = await openPostgresStore({ connectionString: db.url });
  await store.migrate();
});
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('PostgreSQL pruning lock', () => {
  it('skips a batch while another session holds the lock, and runs it once the lock is free', async () => {
    const { env } = await seedEnvironment(store, { name: 'live' });
    const event = eventRecord(env, { createdAt: T0 });
    await store.transaction(async (tx) => {
      await tx.events.insert(event);
      await tx.deliveries.insert(deliveryRecord(event, null, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0, createdAt: T0 }));
    });
    const req = { activityBefore: { live: T0 + 1, test: T0 + 1 }, keysBefore: T0 + 1, limit: 100 };
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1)', [PRUNE_LOCK]);
      expect(await store.prune(req)).toMatchObject({ ran: false, deleted: { events: 0, deliveries: 0 } });
      expect(await store.read((tx) => tx.events.get(env.id, event.id))).not.toBeNull();
      await other.query('SELECT pg_advisory_unlock($1)', [PRUNE_LOCK]);
      expect(await store.prune(req)).toMatchObject({ ran: true, deleted: { events: 1, deliveries: 1 } });
    } finally {
      await other.end();
    }
  });
});

describe('PostgreSQL pruning bound', () => {
  it("runs a batch slower than the API's statement deadline under its own statementMs, with no connection destroyed", async () => {
    // The API's bound is 200 ms (the client destroys a socket 1 200 ms in); every key batch
    // takes 1.5 s (a statement trigger that sleeps), past both.
    const short = await openPostgresStore({ connectionString: db.url, poolSize: 2, log: pino({ level: 'silent' }), deadlines: { statementMs: 200 } });
    const raw = new pg.Client({ connectionString: db.url });
    await raw.connect();
    try {
      await raw.query(`CREATE FUNCTION slow_prune() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1.5); RETURN NULL; END $$;
        CREATE TRIGGER slow_prune AFTER DELETE ON order_idempotency_keys FOR EACH STATEMENT EXECUTE FUNCTION slow_prune()`);
      const req = { activityBefore: { live: T0, test: T0 }, keysBefore: T0, limit: 100 };
      await expect(short.prune(req)).rejects.toMatchObject({ code: '57014' });
      expect(await short.prune({ ...req, statementMs: 5_000 })).toMatchObject({ ran: true });
      expect(short.connectionStats().destroyed).toBe(0);
      // SET LOCAL: the pooled sessions keep the API's bound.
      await expect(short.prune(req)).rejects.toMatchObject({ code: '57014' });
    } finally {
      await raw.query('DROP TRIGGER IF EXISTS slow_prune ON order_idempotency_keys; DROP FUNCTION IF EXISTS slow_prune()');
      await raw.end();
      await short.close();
    }
  });
});

describe('PostgreSQL pruned tables under vacuum', () => {
  // Migration 0009: a vacuum of a table the pruner emptied leaves its pages, so the next
  // foreign-key checks are not planned for a table of no pages (a sequential scan, kept by
  // each backend while the table grows back).
  it('keeps the pages of events and deliveries once the pruner has emptied them and VACUUM ran', async () => {
    const { env } = await seedEnvironment(store, { name: 'test' });
    // 50 a transaction: 600 round trips in one would outlast a store transaction's deadline on a loaded machine.
    for (let from = 0; from < 300; from += 50) {
      await store.transaction(async (tx) => {
        for (let i = from; i < from + 50; i++) {
          const event = eventRecord(env, { createdAt: T0 + i });
          await tx.events.insert(event);
          await tx.deliveries.insert(deliveryRecord(event, null, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0 + i, createdAt: T0 + i }));
        }
      });
    }
    const req = { activityBefore: { live: T0 + 1000, test: T0 + 1000 }, keysBefore: T0, limit: 10_000 };
    expect(await store.prune(req)).toMatchObject({ ran: true, deleted: { events: 300, deliveries: 300 } });
    const raw = new pg.Client({ connectionString: db.url });
    await raw.connect();
    try {
      const pages = async (): Promise<Record<string, number>> => {
        const { rows } = await raw.query<{ relname: string; pages: string }>(
          `SELECT relname, pg_relation_size(oid) / current_setting('block_size')::int AS pages FROM pg_class WHERE relname IN ('events', 'deliveries')`,
        );
        return Object.fromEntries(rows.map((r) => [r.relname, Number(r.pages)]));
      };
      const before = await pages();
      expect(before.events).toBeGreaterThan(1);
      expect(before.deliveries).toBeGreaterThan(1);
      await raw.query('VACUUM events, deliveries');
      expect(await pages()).toEqual(before);
      const { rows } = await raw.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE environment_id = $1', [env.id]);
      expect(Number(rows[0]?.n)).toBe(0);
    } finally {
      await raw.end();
    }
  });
});
