// The loops alone, on fake batch steps (no database): how many batches execute at once, which
// units each takes, when the next may begin. Each fake batch executes until the test opens its
// gate, and answers its units when it commits.
import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../delivery/testing.ts';
import { until } from '../../../../testing/until.ts';
import { BatchLoops, QUIET_BATCHES, type BatchSteps, type LoopRun } from './loops.ts';
import { LoneTurns, type Turn } from './turns.ts';
import { UnitQueue, type Attempt, type BulkStatement, type Unit } from './units.ts';

/** A fake batch: the units it took, answered when it commits. */
interface FakeRun extends LoopRun {
  taken: Unit[];
}

interface Batch {
  units: string[];
  turn: Turn | null;
  open(): void;
}

let units: UnitQueue;
let turns: LoneTurns;
let loops: BatchLoops<FakeRun>;
let batches: Batch[];
/** Batches executing now, and most at once. */
let executing: number;
let mostExecuting: number;
/** Whether the next batches' units change transactions; whether they wait at a gate. */
let hot: boolean;
let gated: boolean;
let begin: (turn: Turn | null) => Promise<FakeRun>;
const names = new Map<Attempt<unknown>, string>();
const kind: BulkStatement<string, string> = { run: async () => [] };

function attempt(name: string): Attempt<string> {
  const a: Attempt<string> = async () => {
    throw new Error('not run here');
  };
  names.set(a as Attempt<unknown>, name);
  return a;
}

const steps: BatchSteps<FakeRun> = {
  begin: (turn) => begin(turn),
  async execute(run, taken, markHot) {
    executing += 1;
    mostExecuting = Math.max(mostExecuting, executing);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    batches.push({ units: taken.map((u) => names.get(u.attempt)!), turn: run.turn, open });
    if (!gated) open();
    await gate;
    if (hot) markHot();
    executing -= 1;
    run.taken = taken;
    return null;
  },
  async commit(run) {
    for (const u of run.taken) u.resolve(names.get(u.attempt));
  },
};

function open(o: { maxExecuting?: number; maxCommitting?: number } = {}): void {
  turns = new LoneTurns();
  units = new UnitQueue({
    maxQueued: 100,
    queueWaitMs: 2_000,
    transactionMs: 4_000,
    maxRuns: 1,
    timers: new FakeTimers(),
    deadlineTimers: new FakeTimers(),
    now: () => 0,
    log: pino({ level: 'silent' }),
    observer: () => null,
    queued: () => loops.kick(),
  });
  loops = new BatchLoops(units, turns, { maxBatch: 32, maxCommitting: o.maxCommitting ?? 4, maxExecuting: o.maxExecuting ?? 2, timers: new FakeTimers(), steps });
}

const submit = (name: string, bulk = false): Promise<unknown> => units.admit(attempt(name), bulk ? { kind, item: name } : null);

/** QUIET_BATCHES batches in a row that changed no transactions, one after the other. */
async function quietRun(): Promise<void> {
  for (let i = 0; i < QUIET_BATCHES; i++) await submit(`quiet-${i}`);
  batches.length = 0;
}

beforeEach(() => {
  batches = [];
  executing = 0;
  mostExecuting = 0;
  hot = false;
  gated = false;
  begin = async (turn) => ({ turn, hot: false, taken: [] });
  open();
});

describe('the batch loops', () => {
  it('units queued together go in one batch; one queued while it executes goes to the next, on the same loop', async () => {
    gated = true;
    const first = [submit('a'), submit('b')];
    await until(() => batches.length === 1, 'the first batch executing');
    const late = submit('c');
    expect(loops.loops).toBe(1);
    batches[0]!.open();
    await until(() => batches.length === 2, 'the second batch');
    batches[1]!.open();
    expect(await Promise.all([...first, late])).toEqual(['a', 'b', 'c']);
    expect(batches.map((b) => b.units)).toEqual([['a', 'b'], ['c']]);
    expect(mostExecuting).toBe(1);
  });

  it(`after ${QUIET_BATCHES} batches in a row that changed no transactions, a second batch executes beside a slow one`, async () => {
    await quietRun();
    gated = true;
    const slow = submit('slow');
    await until(() => batches.length === 1, 'the slow batch executing');
    const fast = submit('fast');
    await until(() => batches.length === 2, 'a second batch beside it');
    expect(loops.loops).toBe(2);
    batches[1]!.open();
    expect(await fast).toBe('fast');
    batches[0]!.open();
    expect(await slow).toBe('slow');
    expect(mostExecuting).toBe(2);
  });

  it('after a batch that changed transactions, batches execute one at a time again', async () => {
    await quietRun();
    hot = true;
    await submit('hot');
    hot = false;
    gated = true;
    const slow = submit('slow');
    await until(() => batches.length === 2, 'the slow batch executing');
    const fast = submit('fast');
    await until(() => units.length === 1, 'the fast unit queued');
    expect(loops.loops).toBe(1);
    batches[1]!.open();
    await until(() => batches.length === 3, 'the fast batch after it');
    batches[2]!.open();
    expect(await Promise.all([slow, fast])).toEqual(['slow', 'fast']);
    expect(mostExecuting).toBe(1);
  });

  it('when no connection can be had, every queued unit fails with that error, and the loops go on', async () => {
    const down = new Error('timeout exceeded when trying to connect');
    begin = async () => {
      throw down;
    };
    const answers = [submit('a'), submit('b')].map((p) => p.then(() => null, (e: unknown) => e));
    expect(await Promise.all(answers)).toEqual([down, down]);
    begin = async (turn) => ({ turn, hot: false, taken: [] });
    expect(await submit('c')).toBe('c');
  });

  it('a loop whose batch would send a lone statement while another is in flight waits for its turn, then takes every unit queued', async () => {
    await quietRun();
    gated = true;
    const first = [submit('a1', true), submit('a2', true)];
    await until(() => batches.length === 1, 'the first lone statement');
    expect(batches[0]!.turn).toEqual({ units: 2 });
    const second = [submit('b1', true)];
    await until(() => turns.waiting === 1, 'a loop waiting for its turn');
    second.push(submit('b2', true));
    await until(() => batches.length === 2, 'the second lone statement');
    expect(batches[1]!.units).toEqual(['b1', 'b2']);
    for (const b of batches) b.open();
    expect(await Promise.all([...first, ...second])).toEqual(['a1', 'a2', 'b1', 'b2']);
  });
});
