// A fresh, migrated store for tests of code that uses the Store directly: SQLite in a
// temporary file, or with TEST_STORE=postgres a fresh PostgreSQL database. close() removes it.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Store } from '../domain/store.ts';
import { openSqliteStore } from '../store/sqlite/store.ts';

export async function openTestStore(): Promise<Store> {
  let store: Store;
  let cleanup: () => Promise<void>;
  if (process.env.TEST_STORE === 'postgres') {
    const [{ createTestDatabase }, { openPostgresStore }] = await Promise.all([
      import('../store/postgres/testing.ts'),
      import('../store/postgres/store.ts'),
    ]);
    const db = await createTestDatabase();
    store = await openPostgresStore({ connectionString: db.url });
    cleanup = () => db.drop();
  } else {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'store-test-'));
    store = await openSqliteStore({ file: path.join(dir, 'test.sqlite') });
    cleanup = () => rm(dir, { recursive: true, force: true });
  }
  await store.migrate();
  const close = store.close.bind(store);
  return Object.assign(store, {
    async close() {
      await close();
      await cleanup();
    },
  });
}
