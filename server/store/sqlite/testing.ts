// Test helper: migrated SQLite stores in a temporary folder, each recording the text of every
// statement it runs (better-sqlite3's `verbose`), closed after each test and removed after the file;
// and an in-memory store whose chosen writes fail as an I/O error does.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach } from 'vitest';
import { openSqliteStore, SqliteStore } from './store.ts';

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

/**
 * A migrated in-memory store whose writes matching `pattern` fail while `faults.left > 0` (each
 * costs one) as SQLite fails some I/O errors and out-of-memories: the whole transaction rolled
 * back, then `code`. `faults.left = Infinity`: a fault that persists. Close it after the test.
 */
export async function transactionEndingStore(pattern: RegExp, code: 'SQLITE_IOERR' | 'SQLITE_NOMEM' = 'SQLITE_IOERR'): Promise<{ store: SqliteStore; faults: { left: number } }> {
  const raw = new Database(':memory:');
  raw.pragma('foreign_keys = ON');
  const faults = { left: 0 };
  const prepare = raw.prepare.bind(raw);
  const failing = (text: string): Database.Statement => {
    const statement = prepare(text);
    if (!pattern.test(text)) return statement;
    const run = statement.run.bind(statement);
    statement.run = (...params: unknown[]) => {
      if (faults.left <= 0) return run(...params);
      faults.left -= 1;
      prepare('ROLLBACK').run();
      throw new Database.SqliteError(code === 'SQLITE_IOERR' ? 'disk I/O error' : 'out of memory', code);
    };
    return statement;
  };
  raw.prepare = failing as typeof raw.prepare;
  const store = new SqliteStore(raw);
  await store.migrate();
  return { store, faults };
}
