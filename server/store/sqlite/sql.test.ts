import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { repositories } from '../repos/index.ts';
import { Db } from './db.ts';
import { migrate } from './migrate.ts';
import { sqliteHooks, sqliteSql } from './sql.ts';

// better-sqlite3 compiles a row constructor (global `Function`) each time SQLite (re)prepares a
// statement, so counting those calls counts re-preparations.
describe('sqliteSql', () => {
  afterEach(() => vi.restoreAllMocks());

  it('keeps the user list prepared across calls with other values, on its index', async () => {
    const raw = new Database(':memory:');
    migrate(raw);
    raw.exec(`INSERT INTO tenants VALUES ('ten_1', 'T', 0); INSERT INTO environments VALUES ('env_1', 'ten_1', 'test', '0', 'x', 0)`);
    const insert = raw.prepare(`INSERT INTO transactions (id, environment_id, tenant_id, type, side, status, user_id, amount, created_at) VALUES (?, 'env_1', 'ten_1', 'payout', 'debit', 'completed', ?, '1', ?)`);
    for (let i = 0; i < 30; i++) insert.run(`txn_${i}`, `user-${i % 6}`, i);
    const db = new Db(raw);
    const repos = repositories(sqliteSql(db), sqliteHooks(db));
    const list = (user: string, limit: number) => repos.transactions.listByUser('env_1', user, { limit, cursor: null });
    expect((await list('user-5', 20)).items).toHaveLength(5); // prepared here, once
    const compiled = vi.spyOn(globalThis, 'Function');
    for (let i = 0; i < 5; i++) await list(`user-${i}`, 10 + i);
    // A bare `?` in WHERE or LIMIT made SQLite re-plan this statement whenever it was bound again.
    expect(compiled).not.toHaveBeenCalled();
    const [text] = [...(db as unknown as { statements: Map<string, unknown> }).statements.keys()].filter((s) => s.includes('user_id'));
    const plan = raw.prepare(`EXPLAIN QUERY PLAN ${text}`).all('env_1', 'u', 21) as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail)).toEqual(['SEARCH transactions USING INDEX transactions_user (environment_id=? AND user_id=?)']);
    raw.close();
  });
});
