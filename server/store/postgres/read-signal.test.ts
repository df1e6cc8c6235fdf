// A read whose caller gave up while it waited for a connection never starts: the store checks
// the caller's signal again once the pool gave it one (store.ts, readWhileWanted), so a read of a
// request already answered at its deadline sends nothing to the database.
import type pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../../testing/until.ts';
import { CallCancelled } from '../../domain/store-errors.ts';
import { openPostgresStore, type PostgresStore } from './store.ts';
import { createTestDatabase } from './testing.ts';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => undefined);
});

/** A store with one connection for reads and transactions; `statements` gets the text of each statement sent on it. */
async function storeWithOneConnection(statements: string[]): Promise<PostgresStore> {
  const db = await createTestDatabase();
  cleanup.push(() => db.drop());
  const store = await openPostgresStore({ connectionString: db.url, poolSize: 1, log: pino({ level: 'silent' }), onStatement: (text) => statements.push(text) });
  cleanup.push(() => store.close());
  await store.migrate();
  statements.length = 0; // the migrations'
  return store;
}

/** How many callers wait in the pool's queue (the store's own pool: a private field, read for the test only). */
const waiting = (store: PostgresStore): number => (store as unknown as { pool: pg.Pool }).pool.waitingCount;

describe('PostgreSQL reads and their caller’s signal', () => {
  it('a read still waiting for a connection when its caller gives up is cancelled once it gets one, and sends nothing', async () => {
    const statements: string[] = [];
    const store = await storeWithOneConnection(statements);
    // The pool's one connection, held by a transaction until the test lets it go.
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let holding = false;
    const write = store.transaction(async () => {
      holding = true;
      await held;
    });
    await until(() => holding, 'the transaction holds the connection');
    const caller = new AbortController();
    let started = false;
    const read = store
      .read(
        async (tx) => {
          started = true;
          return tx.tenants.getEnvironment('env_none');
        },
        { signal: caller.signal },
      )
      .catch((err: unknown) => err);
    await until(() => waiting(store) === 1, 'the read waits for the connection');
    caller.abort(new Error('request deadline'));
    letGo();
    await write;
    expect(await read).toBeInstanceOf(CallCancelled);
    expect(started).toBe(false);
    expect(statements.filter((text) => /environments/i.test(text))).toEqual([]);
    // The connection went back to the pool: the next read gets it and runs.
    expect(await store.read((tx) => tx.tenants.getEnvironment('env_none'), { signal: new AbortController().signal })).toBeNull();
    expect(statements.filter((text) => /environments/i.test(text))).toHaveLength(1);
  });
});
