import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CallCancelled } from '../../domain/store-errors.ts';
import { until } from '../../../testing/until.ts';
import { GroupCommitter, type Bulk } from './group-commit.ts';

/** A committer on a fresh database; `statements` is every statement the connection ran, in order (better-sqlite3's verbose). */
function setup(): { raw: Database.Database; gc: GroupCommitter; commits: () => number; statements: string[] } {
  const statements: string[] = [];
  const raw = new Database(':memory:', { verbose: (text) => statements.push(String(text)) });
  raw.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  return { raw, gc: new GroupCommitter(raw), commits: () => statements.filter((t) => t === 'COMMIT').length, statements };
}

/** What SQLite does on some SQLITE_IOERR, SQLITE_FULL or SQLITE_NOMEM: the whole transaction rolled back, then the error. */
function endTransaction(raw: Database.Database): never {
  raw.prepare('ROLLBACK').run();
  throw new Database.SqliteError('disk I/O error', 'SQLITE_IOERR');
}

/** A bulk kind inserting its keys into t, and each key's unit alone; `fails()` true: the write ends the whole transaction instead. */
function faultyKeys(raw: Database.Database, fails: () => boolean): { kind: Bulk<string, string>; alone: (k: string) => () => string } {
  const insert = (k: string): string => {
    if (fails()) endTransaction(raw);
    raw.prepare('INSERT INTO t (k) VALUES (?)').run(k);
    return k;
  };
  return { kind: { run: (keys) => keys.map(insert) }, alone: (k) => () => insert(k) };
}

/** Each promise's outcome as soon as it settles: what is still pending reads `pending`. */
function outcomes(promises: readonly Promise<unknown>[]): string[] {
  const seen = promises.map(() => 'pending');
  promises.forEach((p, i) =>
    p.then(
      () => (seen[i] = 'fulfilled'),
      (err: unknown) => (seen[i] = `rejected ${(err as { code?: string }).code ?? (err as Error).message}`),
    ),
  );
  return seen;
}

const keysIn = (raw: Database.Database): string[] => (raw.prepare('SELECT k FROM t ORDER BY k').all() as { k: string }[]).map((r) => r.k);

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

  it('a unit whose error ended the whole transaction: it and the units before it are answered with the error, nothing stored; the rest run in the next batch', async () => {
    const { raw, gc } = setup();
    const insert = (k: string) => () => raw.prepare('INSERT INTO t (k) VALUES (?)').run(k);
    const seen = outcomes([gc.submit(insert('a')), gc.submit(() => endTransaction(raw)), gc.submit(insert('c'))]);
    await gc.idle();
    expect(seen).toEqual(['rejected SQLITE_IOERR', 'rejected SQLITE_IOERR', 'fulfilled']);
    expect(keysIn(raw)).toEqual(['c']);
  });

  it('a bulk write whose error ends the whole transaction once: every unit of the batch is answered with it and none is stored; the next batch commits', async () => {
    const { raw, gc, statements } = setup();
    let faults = 1;
    const { kind, alone } = faultyKeys(raw, () => faults-- > 0);
    statements.length = 0;
    const seen = outcomes([gc.submit(() => raw.prepare("INSERT INTO t (k) VALUES ('plain')").run()), ...['a', 'b', 'c', 'd'].map((k) => gc.submitBulk(kind, k, alone(k)))]);
    await gc.idle();
    expect(seen).toEqual(Array(5).fill('rejected SQLITE_IOERR'));
    expect(keysIn(raw)).toEqual([]);
    // No unit ran on after the transaction ended: a SAVEPOINT there would have begun (and its RELEASE committed) one of its own.
    expect(statements.filter((t) => /^(SAVEPOINT|RELEASE|COMMIT)/.test(t))).toEqual(['SAVEPOINT unit', 'RELEASE unit', 'SAVEPOINT unit']);
    expect(await gc.submitBulk(kind, 'e', alone('e'))).toBe('e');
    expect(keysIn(raw)).toEqual(['e']);
  });

  it('a bulk write whose error ends the whole transaction every time: every caller is answered, nothing is stored', async () => {
    const { raw, gc } = setup();
    let failing = true;
    const { kind, alone } = faultyKeys(raw, () => failing);
    const seen = outcomes([...['a', 'b', 'c'].map((k) => gc.submitBulk(kind, k, alone(k))), gc.submit(() => 'read-only unit')]);
    await gc.idle();
    expect(seen).toEqual(['rejected SQLITE_IOERR', 'rejected SQLITE_IOERR', 'rejected SQLITE_IOERR', 'fulfilled']);
    expect(keysIn(raw)).toEqual([]);
    failing = false;
    expect(await gc.submitBulk(kind, 'd', alone('d'))).toBe('d');
  });

  it('a bulk write that falls back to its units alone, one of which ends the whole transaction: the units after it are answered in the next batch', async () => {
    const { raw, gc } = setup();
    // The bulk write fails its own savepoint only (each unit then runs alone); b alone ends the transaction.
    const kind: Bulk<string, string> = {
      run: () => {
        throw new Error('bulk refused');
      },
    };
    const alone = (k: string) => () => (k === 'b' ? endTransaction(raw) : (raw.prepare('INSERT INTO t (k) VALUES (?)').run(k), k));
    const seen = outcomes(['a', 'b', 'c', 'd'].map((k) => gc.submitBulk(kind, k, alone(k))));
    await gc.idle();
    expect(seen).toEqual(['rejected SQLITE_IOERR', 'rejected SQLITE_IOERR', 'fulfilled', 'fulfilled']);
    expect(keysIn(raw)).toEqual(['c', 'd']);
  });
});
