// The store suite on PostgreSQL, spread over files that vitest runs side by side: each case
// opens a store over a database of its own, which costs a CREATE DATABASE and a DROP on the
// server, so one file of a hundred cases was the longest of `npm test`. Each database is a copy
// of one migrated in the file's beforeAll (the suite's own migrate() then finds nothing to do).
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../../domain/store.ts';
import { describeStoreSuite, SUITE_GROUPS, type SuiteGroup } from '../../suite/store-suite.ts';
import { openPostgresStore } from '../store.ts';
import { createTestDatabase, type TestDatabase } from '../testing.ts';

/** Which of the suite's groups each file runs: together, every group once. */
export const SUITE_FILES = {
  /** postgres.test.ts */
  records: ['tenants, wallets, transactions and orders', 'events, endpoints and deliveries', 'portal passkeys', 'sealed secrets', 'tenant isolation'],
  /** postgres-queue.test.ts */
  queue: ['order creation', 'payout creation', 'event stream', 'delivery queue', 'delivery queue depth', 'retention', 'recovery by time range', 'trace context of events', 'misuse and closing'],
} as const satisfies Record<string, readonly SuiteGroup[]>;

/** The groups no file runs, or runs twice: none, or the files above are wrong. */
export function suiteFilesGaps(): string[] {
  const listed: readonly string[] = Object.values(SUITE_FILES).flat();
  return SUITE_GROUPS.filter((g) => listed.filter((x) => x === g).length !== 1);
}

/** A migrated database no session stays connected to: what each case's database is copied from. */
async function migratedTemplate(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  const store = await openPostgresStore({ connectionString: db.url, poolSize: 2 });
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
  return db;
}

/** Declares the suite's groups of `part` on PostgreSQL, each case on a fresh copy of a migrated database. */
export function describePostgresSuite(part: keyof typeof SUITE_FILES): void {
  let template: TestDatabase | null = null;
  beforeAll(async () => {
    template = await migratedTemplate();
  });
  afterAll(async () => {
    await template?.drop();
  });
  const urls = new WeakMap<object, string>();
  /** A store over a fresh database that is dropped when the store closes. */
  const freshStore = async (o: { onStatement?: (text: string) => void } = {}): Promise<Store> => {
    if (template === null) throw new Error('the migrated template is made in beforeAll');
    const db = await createTestDatabase(template);
    // Without the staleness bound: the suite checks when one instance's own versions move, which
    // must not turn on how soon a heartbeat comes back on a loaded machine.
    const store = await openPostgresStore({ connectionString: db.url, poolSize: 12, transactionsStalenessMs: Infinity, transactionsMaxAgeMs: Infinity, ...o });
    urls.set(store, db.url);
    const close = store.close.bind(store);
    store.close = async () => {
      try {
        await close();
      } finally {
        await db.drop();
      }
    };
    return store;
  };
  describeStoreSuite(
    'postgres',
    freshStore,
    (store) => openPostgresStore({ connectionString: urls.get(store) ?? '', poolSize: 4, transactionsStalenessMs: Infinity, transactionsMaxAgeMs: Infinity }),
    SUITE_FILES[part],
  );
}
