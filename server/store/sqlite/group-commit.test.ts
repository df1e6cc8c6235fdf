import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { GroupCommitter } from './group-commit.ts';

function setup(): { raw: Database.Database; gc: GroupCommitter; commits: () => number } {
  const raw = new Database(':memory:');
  raw.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  let commits = 0;
  const exec = raw.exec.bind(raw);
  raw.exec = ((sql: string) => {
    if (sql === 'COMMIT') commits += 1;
    return exec(sql);
  }) as typeof raw.exec;
  return { raw, gc: new GroupCommitter(raw), commits: () => commits };
}

describe('GroupCommitter', () => {
  it('commits concurrent units in one transaction and rolls back a failing unit alone', async () => {
    const { raw, gc, commits } = setup();
    const insert = (k: string) => () => raw.prepare('INSERT INTO t (k) VALUES (?)').run(k);
    const results = await Promise.allSettled([
      gc.submit(insert('a')),
      gc.submit(async () => {
        insert('b')();
        throw new Error('unit b fails after writing');
      }),
      gc.submit(insert('c')),
      gc.submit(insert('a')), // duplicate key: fails alone
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect(raw.prepare('SELECT k FROM t ORDER BY k').all()).toEqual([{ k: 'a' }, { k: 'c' }]);
    expect(commits()).toBe(1);
  });

  it('answers nobody before the commit', async () => {
    const { raw, gc } = setup();
    let committedWhenAnswered: boolean | null = null;
    await gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('x')").run()).then(() => {
      committedWhenAnswered = !raw.inTransaction;
    });
    expect(committedWhenAnswered).toBe(true);
  });

  it('keeps serving after an idle period and runs non-transactional work alone', async () => {
    const { raw, gc } = setup();
    await gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('1')").run());
    await new Promise((r) => setTimeout(r, 5));
    const inTx = await gc.submit(() => raw.inTransaction, false);
    expect(inTx).toBe(false);
    await gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('2')").run());
    await gc.idle();
    expect(raw.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 2 });
  });
});
