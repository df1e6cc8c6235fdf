// A group-committed unit whose caller was answered early (its whole deadline, its signal) is
// never started afterwards and never queued again; one already sent to the database finishes or
// rolls back, and its caller heard OutcomeUnknown. A database that holds a batch open is the
// slow store; the deadlines, retry pauses and queue clock are fakes, fired by the test.
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeTimers } from '../../delivery/testing.ts';
import { CallCancelled, OutcomeUnknown } from '../../domain/store-errors.ts';
import { until } from '../../../testing/until.ts';
import { isStoreUnavailable } from '../../domain/store-unavailable.ts';
import { PgGroupCommitter, StoreOverloaded, type Attempt, type GroupCommitOptions, type BulkStatement } from './group-commit.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';

/** Fires the units' whole deadlines (queue wait + transaction, 6 s by default), not a batch's own (4 s). */
function fireUnitDeadlines(timers: FakeTimers): void {
  for (const [id, t] of [...timers.pending]) {
    if (t.ms !== 6_000) continue;
    timers.pending.delete(id);
    t.fn();
  }
}

// A deadlock as the database reports it: retryable, the unit's savepoint rolled back.
const DEADLOCK = `DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40P01', MESSAGE = 'deadlock detected'; END $$`;

describe('PostgreSQL group commit: callers answered early', () => {
  let db: TestDatabase | null = null;
  let pool: pg.Pool | null = null;

  afterEach(async () => {
    await pool?.end();
    await db?.drop();
    pool = null;
    db = null;
  });

  /** A committer over a fresh database with a table `t`; the timers and clock are the test's. */
  const open = async (opts: Partial<GroupCommitOptions> = {}): Promise<{ committer: PgGroupCommitter; rows: () => Promise<string[]>; started: string[] }> => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 6 });
    pool.on('error', () => undefined);
    await pool.query('CREATE TABLE t (id text PRIMARY KEY)');
    const committer = new PgGroupCommitter(pool, { notify: async () => undefined, log: pino({ level: 'silent' }), deadlineTimers: new FakeTimers(), ...opts });
    const rows = async (): Promise<string[]> => (await pool!.query<{ id: string }>('SELECT id FROM t ORDER BY id')).rows.map((r) => r.id);
    return { committer, rows, started: [] };
  };

  /** A unit that records that it started and inserts `id`; `before` runs first on its connection. */
  const insert =
    (started: string[], id: string, before?: (client: pg.PoolClient) => Promise<void>): Attempt<string> =>
    async (client) => {
      started.push(id);
      await before?.(client);
      await client.query('INSERT INTO t VALUES ($1)', [id]);
      return { value: id, notify: false, touched: null, committed: () => undefined };
    };

  it('a slow batch: units answered while it runs are never started, none answered store-unavailable is committed, the one sent is answered outcome-unknown', async () => {
    const deadlineTimers = new FakeTimers();
    const { committer, rows, started } = await open({ deadlineTimers });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // `slow` holds its batch open; `behind` was taken by the same batch and waits its turn.
    const slow = committer.submit(insert(started, 'slow', () => gate));
    const behind = committer.submit(insert(started, 'behind'));
    await until(() => started.includes('slow'), 'the slow unit started');
    // Queued behind the running batch: one whose request is answered, one past its deadline.
    const request = new AbortController();
    const cancelled = committer.submit(insert(started, 'cancelled'), request.signal);
    const queued = committer.submit(insert(started, 'queued'));
    request.abort();
    await expect(cancelled).rejects.toBeInstanceOf(CallCancelled);
    fireUnitDeadlines(deadlineTimers);
    await expect(slow).rejects.toBeInstanceOf(OutcomeUnknown);
    for (const p of [behind, queued]) {
      const err = await p.then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(StoreOverloaded);
      expect(isStoreUnavailable(err)).toBe(true);
    }
    release();
    // The slow batch ends (its COMMIT is seen). A later unit could commit on another connection
    // before it, so its own commit proves nothing of the slow batch: wait on that batch itself.
    await until(async () => (await rows()).includes('slow'), 'the slow batch committed');
    // Then a later unit: queued after everything, it runs after anything still to run.
    await expect(committer.submit(insert(started, 'later'))).resolves.toBe('later');
    expect(started).toEqual(['slow', 'later']);
    // The one answered outcome-unknown did commit; none answered store-unavailable did.
    expect(await rows()).toEqual(['later', 'slow']);
  });

  it('a unit already sent when its caller is answered by its signal hears outcome-unknown caused by that signal, not by a store deadline', async () => {
    const { committer, rows, started } = await open();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const request = new AbortController();
    const sent = committer.submit(insert(started, 'sent', () => gate), request.signal);
    await until(() => started.includes('sent'), 'the unit sent');
    request.abort();
    const err = await sent.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknown);
    expect((err as OutcomeUnknown).cause).toBeInstanceOf(CallCancelled);
    release();
    await until(async () => (await rows()).includes('sent'), 'its batch committed');
  });

  it('a unit answered while it waits to run again after a deadlock is not run again', async () => {
    const deadlineTimers = new FakeTimers();
    const timers = new FakeTimers();
    const { committer, rows, started } = await open({ deadlineTimers, timers });
    const unit = committer.submit(insert(started, 'retried', async (client) => void (started.length === 1 && (await client.query(DEADLOCK)))));
    await until(() => timers.pending.size === 1, 'the pause before the second run');
    fireUnitDeadlines(deadlineTimers);
    const err = await unit.then(() => null, (e: unknown) => e);
    // It wrote nothing (its savepoint rolled back): the caller may hear so.
    expect(err).toBeInstanceOf(StoreOverloaded);
    timers.fireAll();
    await expect(committer.submit(insert(started, 'later'))).resolves.toBe('later');
    expect(started).toEqual(['retried', 'later']);
    expect(await rows()).toEqual(['later']);
  });

  it('a unit queued again after a deadlock waits its queue time from then, not from its first queueing', async () => {
    let now = 0;
    const timers = new FakeTimers();
    const { committer, rows, started } = await open({ timers, now: () => now, queueWaitMs: 2_000 });
    const unit = committer.submit(insert(started, 'retried', async (client) => void (started.length === 1 && (await client.query(DEADLOCK)))));
    await until(() => timers.pending.size === 1, 'the pause before the second run');
    // Its first run took 5 s (a slow database): past queueWaitMs since it was first queued.
    now = 5_000;
    timers.fireAll();
    await expect(unit).resolves.toBe('retried');
    expect(started).toEqual(['retried', 'retried']);
    expect(await rows()).toEqual(['retried']);
  });
  // A bulk statement that fails with the database's own error: nothing of it stands.
  const failingKind: BulkStatement<string, string> = {
    async run(client) {
      await client.query('SELECT 1/0');
      return [];
    },
  };

  for (const where of ['sent alone', 'inside a batch'] as const) {
    it(`a unit whose bulk statement failed (${where}) and that is answered before it runs alone was not written: its caller hears so, not outcome-unknown`, async () => {
      const { committer, rows, started } = await open();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      // Inside a batch: a plain unit first, so the bulk statement runs in a savepoint after BEGIN.
      const plain = where === 'inside a batch' ? [committer.submit(insert(started, 'plain'))] : [];
      const first = committer.submitBulk(failingKind, 'first', insert(started, 'first', () => gate));
      const request = new AbortController();
      const second = committer.submitBulk(failingKind, 'second', insert(started, 'second'), request.signal);
      // The statement failed; the first unit runs alone and holds the batch at its gate.
      let err: unknown;
      try {
        await until(() => started.includes('first'), 'the first unit running alone');
        request.abort();
        err = await second.then(() => null, (e: unknown) => e);
      } finally {
        release(); // a failed expectation leaves no batch held (the pool could not end)
      }
      expect(err).toBeInstanceOf(CallCancelled);
      await expect(first).resolves.toBe('first');
      await Promise.all(plain);
      expect(started).toEqual(where === 'inside a batch' ? ['plain', 'first'] : ['first']);
      expect(await rows()).toEqual(where === 'inside a batch' ? ['first', 'plain'] : ['first']);
    });
  }
});
