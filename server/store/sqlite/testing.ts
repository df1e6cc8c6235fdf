// Test helper: migrated SQLite stores in a temporary folder, each recording the text of every
// statement it runs (better-sqlite3's `verbose`), closed after each test and removed after the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { openSqliteStore, type SqliteStore } from './store.ts';

/** Registers the clean-up hooks; call at the top of a test file or describe block. */
export function statementRecordingStores(prefix: string): () => Promise<{ store: SqliteStore; statements: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const opened: SqliteStore[] = [];
  let files = 0;
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return async () => {
    const statements: string[] = [];
    const store = await openSqliteStore({ file: join(dir, `store-${++files}.sqlite`), onStatement: (t) => statements.push(t) });
    opened.push(store);
    await store.migrate();
    return { store, statements };
  };
}

/** The first three words of each recorded statement, savepoints and releases left out: what a batch wrote. */
export const writeHeads = (statements: readonly string[]): string[] =>
  statements.filter((t) => !/^(SAVEPOINT|RELEASE)/.test(t)).map((t) => t.split(/\s+/).slice(0, 3).join(' '));
