// The store relies on private fields of pg (a client's socket) and pg-pool (its clients, idle
// and all) to destroy connections to a silent host. A pg release that renamed them would bring
// back the hangs unseen: the store refuses to open instead, naming the installed versions. And
// what a connection's 'error' handler takes in is counted and logged at debug, not dropped.
import { createRequire } from 'node:module';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogger } from '../../delivery/testing.ts';
import { until } from '../../../testing/until.ts';
import { openPostgresStore, type PostgresStore } from './store.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';

const PG_VERSION = (createRequire(import.meta.url)('pg/package.json') as { version: string }).version;
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => undefined);
});

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  cleanup.push(() => db.drop());
  return db;
}

/** pg.Pool as a release would be that renamed `field`: pools work, the field is not there. */
function poolWithout(field: string): typeof pg.Pool {
  const Original = pg.Pool;
  return class extends Original {
    constructor(config?: pg.PoolConfig) {
      super(config);
      const target = this;
      // pg-pool's own methods run on the real pool; only the store's reads see the field gone.
      return new Proxy(target, {
        get(t, prop) {
          if (prop === field) return undefined;
          const value: unknown = Reflect.get(t, prop, t);
          return typeof value === 'function' ? value.bind(t) : value;
        },
      });
    }
  };
}

describe("pg's private fields", () => {
  it.each(['_idle', '_clients'])('a pg whose pools have no %s: the store does not open, and says which pg is installed', async (field) => {
    const { url } = await database();
    const Original = pg.Pool;
    pg.Pool = poolWithout(field);
    try {
      const opened = openPostgresStore({ connectionString: url, poolSize: 2 });
      opened.then((s) => cleanup.push(() => s.close()), () => undefined);
      await expect(opened).rejects.toThrow(new RegExp(`pg ${PG_VERSION.replaceAll('.', '\\.')} .*${field}`));
    } finally {
      pg.Pool = Original;
    }
  });

  it("counts and logs at debug each error a connection's own handler takes in", async () => {
    const { url } = await database();
    const { log, lines } = captureLogger('debug');
    const store: PostgresStore = await openPostgresStore({ connectionString: url, poolSize: 2, log });
    cleanup.push(() => store.close());
    await store.migrate();
    expect(store.connectionStats().clientErrors).toBe(0);
    // The database ends every session of the store: each connection's handler hears of it.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    cleanup.push(() => admin.end());
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'payments-service%'");
    // Each connection hears of it on its own (the 57P01 notice, the listener lost, or the socket's end, in any order): waits
    // until the counter and the debug lines agree and the database's own reason is among them.
    const logged = (): string[] => lines.filter((l) => l.includes('"level":20') && l.includes('PostgreSQL connection error'));
    await until(
      () => store.connectionStats().clientErrors > 0 && logged().length === store.connectionStats().clientErrors && logged().some((l) => l.includes('57P01')),
      () => `the errors counted (${store.connectionStats().clientErrors}) and each logged at debug, one with 57P01; logged:\n${logged().join('')}`,
    );
  });
});
