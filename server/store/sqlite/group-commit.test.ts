import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CallCancelled } from '../../domain/store-errors.ts';
import { until } from '../../../testing/until.ts';
import { GroupCommitter } from './group-commit.ts';

/** A committer on a fresh database; `statements` is every statement the connection ran, in order (better-sqlite3's verbose). */
function setup(): { raw: Database.Database; gc: GroupCommitter; commits: () => number; statements: string[] } {
  const statements: string[] = [];
  const raw = new Database(':memory:', { verbose: (text) => statements.push(String(text)) });
  raw.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  return { raw, gc: new GroupCommitter(raw), commits: () => statements.filter((t) => t === 'COMMIT').length, statements };
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

  it('runs its own statements prepared: BEGIN, a SAVEPOINT and RELEASE per unit (ROLLBACK TO before it for a failing one), COMMIT; nothing parsed per batch', async () => {
    const { raw, gc, statements } = setup();
    const insert = raw.prepare('INSERT INTO t (k) VALUES (?)');
    let parsed = 0;
    for (const method of ['exec', 'prepare'] as const) {
      const original = raw[method].bind(raw) as (text: string) => unknown;
      (raw as unknown as Record<string, unknown>)[method] = (text: string) => ((parsed += 1), original(text));
    }
    statements.length = 0;
    const results = await Promise.allSettled([gc.submit(() => insert.run('a')), gc.submit(() => insert.run('a')), gc.submit(() => insert.run('b'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(statements).toEqual([
      'BEGIN IMMEDIATE',
      'SAVEPOINT unit',
      "INSERT INTO t (k) VALUES ('a')",
      'RELEASE unit',
      'SAVEPOINT unit',
      "INSERT INTO t (k) VALUES ('a')",
      'ROLLBACK TO unit',
      'RELEASE unit',
      'SAVEPOINT unit',
      "INSERT INTO t (k) VALUES ('b')",
      'RELEASE unit',
      'COMMIT',
    ]);
    expect(parsed).toBe(0);
  });

  it('answers nobody before the commit', async () => {
    const { raw, gc } = setup();
    let committedWhenAnswered: boolean | null = null;
    await gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('x')").run()).then(() => {
      committedWhenAnswered = !raw.inTransaction;
    });
    expect(committedWhenAnswered).toBe(true);
  });

  it('answers nobody before the sync after the commit, and starts the next batch only after it', async () => {
    const raw = new Database(':memory:');
    raw.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const events: string[] = [];
    let finishSync: () => void = () => undefined;
    const gc = new GroupCommitter(raw, 128, () => {
      events.push(`sync (in transaction: ${raw.inTransaction})`);
      return new Promise<void>((resolve) => {
        finishSync = resolve;
      });
    });
    const first = gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('a')").run()).then(() => events.push('a answered'));
    await until(() => events.length === 1, "a's sync");
    const second = gc.submit(() => {
      events.push('b runs');
      raw.prepare("INSERT INTO t (k) VALUES ('b')").run();
    });
    finishSync();
    await first;
    await until(() => events.length === 4, "b's sync");
    finishSync();
    await second;
    // b, queued during a's sync, ran only after a was answered: the order is the proof.
    expect(events).toEqual(['sync (in transaction: false)', 'a answered', 'b runs', 'sync (in transaction: false)']);
  });

  it('fails the batch when the sync fails: nobody is told the write is durable', async () => {
    const raw = new Database(':memory:');
    raw.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const gc = new GroupCommitter(raw, 128, () => Promise.reject(new Error('EIO')));
    await expect(gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('a')").run())).rejects.toThrow('EIO');
  });

  it('keeps serving after an idle period and runs non-transactional work alone', async () => {
    const { raw, gc } = setup();
    await gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('1')").run());
    await gc.idle();
    const inTx = await gc.submit(() => raw.inTransaction, { transactional: false });
    expect(inTx).toBe(false);
    await gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('2')").run());
    await gc.idle();
    expect(raw.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 2 });
  });

  it('syncs a batch only when it holds a unit that needs it (claims do not)', async () => {
    const raw = new Database(':memory:');
    raw.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    let syncs = 0;
    const gc = new GroupCommitter(raw, 128, async () => {
      syncs += 1;
    });
    const insert = (k: string) => () => raw.prepare('INSERT INTO t (k) VALUES (?)').run(k);
    await Promise.all([gc.submit(insert('a'), { durable: false }), gc.submit(insert('b'), { durable: false })]);
    expect(syncs).toBe(0);
    expect(raw.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2 });
    // One unit that needs the sync makes the whole batch wait for it (and covers the others).
    await Promise.all([gc.submit(insert('c'), { durable: false }), gc.submit(insert('d'))]);
    expect(syncs).toBe(1);
    expect(gc.stats).toMatchObject({ batches: 2, units: 4, syncs: 1 });
  });

  it('never starts a unit whose caller was answered while it was queued (its signal aborted): nothing of it is written', async () => {
    const { raw, gc } = setup();
    const started: string[] = [];
    const insert = (k: string) => () => {
      started.push(k);
      raw.prepare('INSERT INTO t (k) VALUES (?)').run(k);
    };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = gc.submit(async () => {
      insert('slow')();
      await gate;
    });
    await new Promise((r) => setImmediate(r));
    const request = new AbortController();
    const answered = gc.submit(insert('answered'), { signal: request.signal });
    request.abort();
    await expect(answered).rejects.toBeInstanceOf(CallCancelled);
    await expect(gc.submit(insert('late'), { signal: request.signal })).rejects.toBeInstanceOf(CallCancelled);
    release();
    await slow;
    await gc.submit(insert('later'));
    expect(started).toEqual(['slow', 'later']);
    expect(raw.prepare('SELECT k FROM t ORDER BY k').all()).toEqual([{ k: 'later' }, { k: 'slow' }]);
  });
});
