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

  /** A committer whose syncs end only when the test says so. */
  function manualSync(): { raw: Database.Database; gc: GroupCommitter; events: string[]; finishSync: (err?: Error) => void } {
    const raw = new Database(':memory:');
    raw.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const events: string[] = [];
    const ends: Array<(err?: Error) => void> = [];
    const gc = new GroupCommitter(raw, 128, () => {
      events.push(`sync (in transaction: ${raw.inTransaction})`);
      return new Promise<void>((resolve, reject) => ends.push((err) => (err ? reject(err) : resolve())));
    });
    return { raw, gc, events, finishSync: (err) => ends.shift()?.(err) };
  }
  const tick = () => new Promise((r) => setTimeout(r, 5));

  it('answers nobody before the sync after the commit; the next batch runs meanwhile and waits for both syncs', async () => {
    const { raw, gc, events, finishSync } = manualSync();
    const first = gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('a')").run()).then(() => events.push('a answered'));
    await tick();
    expect(events).toEqual(['sync (in transaction: false)']);
    const second = gc.submit(() => {
      events.push('b runs');
      raw.prepare("INSERT INTO t (k) VALUES ('b')").run();
    }).then(() => events.push('b answered'));
    await tick();
    // b ran and committed during a's sync (the event loop is not idle for an fsync), but only
    // one sync runs at a time, and nobody is answered yet.
    expect(events).toEqual(['sync (in transaction: false)', 'b runs']);
    expect(raw.inTransaction).toBe(false);
    finishSync();
    await first;
    await tick();
    // The next sync (for b) starts as a's ends.
    expect(events).toEqual(['sync (in transaction: false)', 'b runs', 'sync (in transaction: false)', 'a answered']);
    finishSync();
    await second;
    expect(events.at(-1)).toBe('b answered');
    expect(gc.stats).toMatchObject({ batches: 2, syncs: 2 });
  });

  it('one sync covers every commit made while the previous one ran', async () => {
    const { raw, gc, events, finishSync } = manualSync();
    const answered: string[] = [];
    const insert = (k: string) => gc.submit(() => raw.prepare('INSERT INTO t (k) VALUES (?)').run(k)).then(() => answered.push(k));
    const a = insert('a');
    await tick();
    const rest = [insert('b')];
    await tick();
    rest.push(insert('c')); // b and c: two more batches during a's sync
    await tick();
    expect(gc.stats.batches).toBe(3);
    finishSync();
    await a;
    await tick();
    expect(answered).toEqual(['a']);
    finishSync(); // the second sync covers b and c
    await Promise.all(rest);
    expect(answered).toEqual(['a', 'b', 'c']);
    expect(events.filter((e) => e.startsWith('sync'))).toHaveLength(2);
  });

  it('a unit that needs no sync still waits for the sync of a commit before it (it may have read that write)', async () => {
    const { raw, gc, finishSync } = manualSync();
    const order = gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('order')").run());
    await tick();
    let claimed: unknown = null;
    const claim = gc.submit(() => raw.prepare('SELECT k FROM t').all(), true, false).then((rows) => (claimed = rows));
    await tick();
    expect(claimed).toBeNull(); // it read the order's row, whose sync is still running
    finishSync();
    await Promise.all([order, claim]);
    expect(claimed).toEqual([{ k: 'order' }]);
    expect(gc.stats.syncs).toBe(1); // the claim's own batch needed none
  });

  it('a failed sync fails every commit after the last good one and refuses new work', async () => {
    const { raw, gc, finishSync } = manualSync();
    const a = gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('a')").run());
    await tick();
    const b = gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('b')").run());
    const durable = (async () => {
      await tick();
      return gc.durable();
    })();
    await tick();
    finishSync(new Error('EIO'));
    await expect(a).rejects.toThrow('EIO');
    await expect(b).rejects.toThrow('EIO');
    await expect(durable).rejects.toThrow('EIO');
    await expect(gc.submit(() => 1)).rejects.toThrow('EIO');
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
    await new Promise((r) => setTimeout(r, 5));
    const inTx = await gc.submit(() => raw.inTransaction, false);
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
    await Promise.all([gc.submit(insert('a'), true, false), gc.submit(insert('b'), true, false)]);
    expect(syncs).toBe(0);
    expect(raw.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2 });
    // One unit that needs the sync makes the whole batch wait for it (and covers the others).
    await Promise.all([gc.submit(insert('c'), true, false), gc.submit(insert('d'))]);
    expect(syncs).toBe(1);
    expect(gc.stats).toMatchObject({ batches: 2, units: 4, syncs: 1 });
  });
});
