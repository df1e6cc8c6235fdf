// One batch's execution on a fake connection that records each statement sent and fails the
// ones a test names: which statements a batch sends, and what each unit leaves for the commit.
// (The same on a real database: ../group-commit.test.ts.)
import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { OutcomeUnknown } from '../../../domain/store-errors.ts';
import { executeBatch, type BatchContext, type Run } from './batch.ts';
import { LoneTurns } from './turns.ts';
import type { Attempt, BulkStatement, Unit } from './units.ts';

const databaseError = (code: string): Error => Object.assign(new pg.DatabaseError(`error ${code}`, 0, 'error'), { code });

/** A connection that records what it is sent; `fail` names the statements that throw, and with what. */
function connection(fail: (text: string) => Error | null = () => null): { client: pg.PoolClient; sent: string[] } {
  const sent: string[] = [];
  const client = {
    async query(text: string) {
      sent.push(text);
      const err = fail(text);
      if (err) throw err;
      return { command: 'SELECT', rows: [] };
    },
    release: () => undefined,
  };
  return { client: client as unknown as pg.PoolClient, sent };
}

const newRun = (client: pg.PoolClient): Run => ({ client, savepoint: false, done: [], hot: false, bulkUnits: 0, selfCommitted: false, deadline: null, turn: null });

/** A unit that sends `unit <id>` (failing if the connection says so); `touched`: it changed that environment's transactions. */
function unit(id: string, o: { bulk?: BulkStatement<unknown, unknown>; touched?: string } = {}): Unit {
  const attempt: Attempt<string> = async (client) => {
    await client.query(`unit ${id}`);
    return { value: id, notify: false, touched: o.touched === undefined ? null : new Set([o.touched]), committed: () => undefined };
  };
  return { attempt, bulk: o.bulk ? { kind: o.bulk, item: id } : null, runs: 1, queuedAt: 0, sent: false, answered: false, resolve: () => undefined, reject: () => undefined, observed: undefined };
}

/** A bulk kind whose statement is `bulk a,b,…`. */
const bulkKind: BulkStatement<unknown, unknown> = {
  async run(client, items) {
    await client.query(`bulk ${items.join(',')}`);
    return items.map((id) => ({ value: id, notify: false, touched: null, committed: () => undefined }));
  },
};

function context(o: { turns?: LoneTurns; putBack?: Unit[] } = {}): BatchContext & { hotCalls: number } {
  const ctx = {
    turns: o.turns ?? new LoneTurns(),
    log: pino({ level: 'silent' }),
    hotCalls: 0,
    hot: () => void (ctx.hotCalls += 1),
    putBack: (units: Unit[]) => void o.putBack?.push(...units),
  };
  return ctx;
}

const outcomes = (run: Run) => run.done.map((d) => (d.ok ? d.outcome.value : `failed: ${(d.err as Error).message}`));

describe('a batch executing', () => {
  it('sends BEGIN and each unit in its own savepoint, releasing one and opening the next in one round trip; the last is left to the COMMIT', async () => {
    const { client, sent } = connection();
    const run = newRun(client);
    const ctx = context();
    expect(await executeBatch(run, [unit('a'), unit('b', { touched: 'env-1' })], ctx)).toBeNull();
    expect(sent).toEqual(['BEGIN; SAVEPOINT unit', 'unit a', 'RELEASE SAVEPOINT unit; SAVEPOINT unit', 'unit b', 'RELEASE SAVEPOINT unit']);
    expect(outcomes(run)).toEqual(['a', 'b']);
    expect(run.selfCommitted).toBe(false);
    expect(ctx.hotCalls).toBe(1);
  });

  it('a unit that fails rolls back to its savepoint alone; the rest of the batch goes on', async () => {
    const { client, sent } = connection((t) => (t === 'unit b' ? databaseError('23505') : null));
    const run = newRun(client);
    expect(await executeBatch(run, [unit('a'), unit('b'), unit('c')], context())).toBeNull();
    expect(sent).toEqual(['BEGIN; SAVEPOINT unit', 'unit a', 'RELEASE SAVEPOINT unit; SAVEPOINT unit', 'unit b', 'ROLLBACK TO SAVEPOINT unit', 'unit c', 'RELEASE SAVEPOINT unit']);
    expect(outcomes(run)).toEqual(['a', 'failed: error 23505', 'c']);
  });

  it('a unit rolled back to its savepoint is no longer sent: nothing of it can commit, so a caller answered early hears it was not written', async () => {
    let released = 0;
    const { client } = connection((t) => (t === 'unit a' ? databaseError('23505') : t.startsWith('RELEASE') && released++ === 0 ? databaseError('25P02') : null));
    const run = newRun(client);
    const [a, b, c] = [unit('a'), unit('b'), unit('c')];
    const seen: boolean[] = [];
    const attempt = c.attempt;
    c.attempt = async (conn) => {
      seen.push(a.sent, b.sent);
      return attempt(conn);
    };
    await executeBatch(run, [a, b, c], context());
    // a failed on its own, b caught an error inside: both rolled back before c ran.
    expect(seen).toEqual([false, false]);
    expect(c.sent).toBe(true);
  });

  it('a unit that caught a database error and went on is rolled back and fails', async () => {
    let released = 0;
    const { client, sent } = connection((t) => (t.startsWith('RELEASE') && released++ === 0 ? databaseError('25P02') : null));
    const run = newRun(client);
    expect(await executeBatch(run, [unit('a'), unit('b')], context())).toBeNull();
    expect(sent).toEqual(['BEGIN; SAVEPOINT unit', 'unit a', 'RELEASE SAVEPOINT unit; SAVEPOINT unit', 'ROLLBACK TO SAVEPOINT unit', 'unit b', 'RELEASE SAVEPOINT unit']);
    expect(outcomes(run)).toEqual([expect.stringMatching(/^failed: transaction rolled back/), 'b']);
  });

  it('a batch of one bulk kind only sends its one statement alone, a transaction of its own, and gives back its turn', async () => {
    const { client, sent } = connection();
    const run = newRun(client);
    const turns = new LoneTurns();
    expect(await executeBatch(run, [unit('a', { bulk: bulkKind }), unit('b', { bulk: bulkKind })], context({ turns }))).toBeNull();
    expect(sent).toEqual(['bulk a,b']);
    expect(outcomes(run)).toEqual(['a', 'b']);
    expect(run).toMatchObject({ selfCommitted: true, bulkUnits: 2, turn: null });
    expect(turns.count).toBe(0);
  });

  it('a lone statement the database refuses stands for nothing: its units run alone inside BEGIN, no longer sent meanwhile', async () => {
    const { client, sent } = connection((t) => (t.startsWith('bulk') ? databaseError('22012') : null));
    const run = newRun(client);
    const [a, b] = [unit('a', { bulk: bulkKind }), unit('b', { bulk: bulkKind })];
    const sentWhenStarted: boolean[] = [];
    const attempt = a.attempt;
    a.attempt = async (c) => {
      sentWhenStarted.push(b.sent);
      return attempt(c);
    };
    expect(await executeBatch(run, [a, b], context())).toBeNull();
    expect(sent).toEqual(['bulk a,b', 'BEGIN; SAVEPOINT unit', 'unit a', 'RELEASE SAVEPOINT unit; SAVEPOINT unit', 'unit b', 'RELEASE SAVEPOINT unit']);
    expect(sentWhenStarted).toEqual([false]);
    expect(run).toMatchObject({ selfCommitted: false, bulkUnits: 0 });
  });

  it('a lone statement whose connection is lost may have committed: its units are outcome-unknown, and not run again', async () => {
    const { client, sent } = connection((t) => (t.startsWith('bulk') ? new Error('Connection terminated unexpectedly') : null));
    const run = newRun(client);
    expect(await executeBatch(run, [unit('a', { bulk: bulkKind })], context())).toBeNull();
    expect(sent).toEqual(['bulk a']);
    expect(run.done.map((d) => !d.ok && d.err instanceof OutcomeUnknown)).toEqual([true]);
    expect(run.selfCommitted).toBe(true);
  });

  it('beside other units, a bulk kind\'s units share one savepoint; when their statement fails they roll back and run alone', async () => {
    const { client, sent } = connection((t) => (t === 'bulk b,c' ? databaseError('22012') : null));
    const run = newRun(client);
    const units = [unit('a'), unit('b', { bulk: bulkKind }), unit('c', { bulk: bulkKind })];
    expect(await executeBatch(run, units, context())).toBeNull();
    expect(sent).toEqual([
      'BEGIN; SAVEPOINT unit',
      'unit a',
      'RELEASE SAVEPOINT unit; SAVEPOINT unit',
      'bulk b,c',
      'ROLLBACK TO SAVEPOINT unit',
      'unit b',
      'RELEASE SAVEPOINT unit; SAVEPOINT unit',
      'unit c',
      'RELEASE SAVEPOINT unit',
    ]);
    expect(outcomes(run)).toEqual(['a', 'b', 'c']);
  });

  it('a connection lost mid-batch fails the units it ran and gives back those it never started; never starts a unit whose caller was answered', async () => {
    let lost = false;
    const { client } = connection((t) => ((lost ||= t === 'unit b') ? new Error('Connection terminated unexpectedly') : null));
    const run = newRun(client);
    const putBack: Unit[] = [];
    const [a, b, gone, c] = [unit('a'), unit('b'), unit('gone'), unit('c', { bulk: bulkKind })];
    gone.answered = true;
    const err = await executeBatch(run, [a, b, gone, c], context({ putBack }));
    expect(err).toHaveProperty('message', 'Connection terminated unexpectedly');
    // a succeeded, b failed with the batch; c (another group) goes back.
    expect(outcomes(run)).toEqual(['a', 'failed: Connection terminated unexpectedly']);
    expect(putBack).toEqual([c]);
  });

  it('a batch whose units all waited too long holds nothing: no statement, nothing to commit', async () => {
    const { client, sent } = connection();
    const run = newRun(client);
    expect(await executeBatch(run, [], context())).toBeNull();
    expect(sent).toEqual([]);
    expect(run.selfCommitted).toBe(true);
  });
});
