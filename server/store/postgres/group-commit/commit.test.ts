// A batch's end on a fake connection: COMMIT or ROLLBACK, the connection released, the
// notification and each caller's answer in their order. (On a real database: ../group-commit.test.ts.)
import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../delivery/testing.ts';
import { OutcomeUnknown } from '../../../domain/store-errors.ts';
import type { Run } from './batch.ts';
import { commitBatch, type CommitContext } from './commit.ts';
import type { Outcome, Unit } from './units.ts';

/** A connection that records what it is sent and answers COMMIT with `commit` (an error: thrown). */
function connection(o: { commit?: string | Error; rollback?: Error } = {}) {
  const sent: string[] = [];
  const released: (Error | undefined)[] = [];
  const client = {
    async query(text: string) {
      sent.push(text);
      if (text === 'COMMIT' && o.commit instanceof Error) throw o.commit;
      if (text === 'ROLLBACK' && o.rollback) throw o.rollback;
      return { command: text === 'COMMIT' ? (o.commit ?? 'COMMIT') : text };
    },
    release: (err?: Error) => void released.push(err),
  };
  return { client: client as unknown as pg.PoolClient, sent, released };
}

/** A unit whose answer lands in `heard`, in order. */
function unit(id: string, heard: string[]): Unit {
  return {
    attempt: async () => {
      throw new Error('not run here');
    },
    bulk: null,
    runs: 1,
    queuedAt: 0,
    sent: true,
    answered: false,
    resolve: (v) => void heard.push(`${id}: ${String(v)}`),
    reject: (e) => void heard.push(`${id} failed: ${(e as Error).name}: ${(e as Error).message}`),
    observed: undefined,
  };
}

const outcome = (value: string, heard: string[], o: Partial<Outcome<unknown>> = {}): Outcome<unknown> => ({
  value,
  notify: false,
  touched: null,
  committed: () => void heard.push(`${value} committed`),
  ...o,
});

function context(heard: string[], o: { rerun?: (u: Unit) => boolean; notifyFails?: boolean } = {}): CommitContext & { deadlineTimers: FakeTimers } {
  return {
    notify: async (deliveries, changed) => {
      heard.push(`notify deliveries=${deliveries} changed=${[...changed].join(',')}`);
      if (o.notifyFails) throw new Error('listener gone');
    },
    log: pino({ level: 'silent' }),
    deadlineTimers: new FakeTimers(),
    stats: { batches: 0, units: 0, bulkUnits: 0 },
    rerun: (u) => o.rerun?.(u) ?? false,
  };
}

function run(client: pg.PoolClient, done: Run['done'], o: Partial<Run> = {}): Run {
  return { client, savepoint: true, done, hot: false, bulkUnits: 0, selfCommitted: false, deadline: null, turn: null, ...o };
}

describe('a batch committing', () => {
  it('sends COMMIT, releases the connection, counts the batch and answers each unit: the ones that failed alone with their own error', async () => {
    const heard: string[] = [];
    const { client, sent, released } = connection();
    const ctx = context(heard);
    const deadline = ctx.deadlineTimers.setTimeout(() => undefined, 4_000);
    const [a, b] = [unit('a', heard), unit('b', heard)];
    await commitBatch(run(client, [{ unit: a, ok: true, outcome: outcome('a', heard) }, { unit: b, ok: false, err: new Error('refused') }], { deadline, bulkUnits: 1 }), null, ctx);
    expect(sent).toEqual(['COMMIT']);
    expect(released).toEqual([undefined]);
    expect(heard).toEqual(['a committed', 'a: a', 'b failed: Error: refused']);
    expect(ctx.stats).toEqual({ batches: 1, units: 2, bulkUnits: 1 });
    expect(ctx.deadlineTimers.pending.size).toBe(0);
  });

  it('a batch that changed transactions notifies before answering; one that only queued deliveries answers first; one with neither does not notify', async () => {
    const cases = [
      { touched: new Set(['env-1']), notify: true, expected: ['notify deliveries=true changed=env-1', 'a committed', 'a: a'] },
      { touched: null, notify: true, expected: ['a committed', 'a: a', 'notify deliveries=true changed='] },
      { touched: null, notify: false, expected: ['a committed', 'a: a'] },
    ];
    for (const c of cases) {
      const heard: string[] = [];
      const { client } = connection();
      await commitBatch(run(client, [{ unit: unit('a', heard), ok: true, outcome: outcome('a', heard, { touched: c.touched, notify: c.notify }) }]), null, context(heard));
      expect(heard).toEqual(c.expected);
    }
  });

  it('a notification that fails is logged, never told to the callers: their data is committed', async () => {
    const heard: string[] = [];
    const { client } = connection();
    await commitBatch(run(client, [{ unit: unit('a', heard), ok: true, outcome: outcome('a', heard, { touched: new Set(['env-1']) }) }]), null, context(heard, { notifyFails: true }));
    expect(heard).toEqual(['notify deliveries=false changed=env-1', 'a committed', 'a: a']);
  });

  it('a batch that committed itself (a lone statement) sends no COMMIT', async () => {
    const heard: string[] = [];
    const { client, sent } = connection();
    const ctx = context(heard);
    await commitBatch(run(client, [{ unit: unit('a', heard), ok: true, outcome: outcome('a', heard) }], { selfCommitted: true, bulkUnits: 1 }), null, ctx);
    expect(sent).toEqual([]);
    expect(heard).toEqual(['a committed', 'a: a']);
    expect(ctx.stats).toEqual({ batches: 1, units: 1, bulkUnits: 1 });
  });

  it('a COMMIT without the database\'s answer answers every unit outcome-unknown, and a connection whose ROLLBACK failed is released broken', async () => {
    const heard: string[] = [];
    const broken = new Error('not queryable');
    const { client, sent, released } = connection({ commit: new Error('Connection terminated unexpectedly'), rollback: broken });
    const ctx = context(heard);
    await commitBatch(run(client, [{ unit: unit('a', heard), ok: true, outcome: outcome('a', heard) }, { unit: unit('b', heard), ok: false, err: new Error('refused') }]), null, ctx);
    expect(sent).toEqual(['COMMIT', 'ROLLBACK']);
    expect(released).toEqual([broken]);
    expect(heard).toEqual([`a failed: OutcomeUnknown: ${new OutcomeUnknown(null).message}`, `b failed: OutcomeUnknown: ${new OutcomeUnknown(null).message}`]);
    expect(ctx.stats.batches).toBe(0);
  });

  it('a batch that failed rolls back and every unit hears its error, unless it runs again (a deadlock)', async () => {
    const heard: string[] = [];
    const { client, sent, released } = connection();
    const [a, b] = [unit('a', heard), unit('b', heard)];
    const lost = new Error('Connection terminated unexpectedly');
    await commitBatch(run(client, [{ unit: a, ok: true, outcome: outcome('a', heard) }, { unit: b, ok: false, err: lost }]), lost, context(heard, { rerun: (u) => u === b }));
    expect(sent).toEqual(['ROLLBACK']);
    expect(released).toEqual([undefined]);
    expect(heard).toEqual(['a failed: Error: Connection terminated unexpectedly']);
  });
});
