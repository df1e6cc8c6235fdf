// The unit queue alone: admission, early answers (whole deadline, signal), taking, giving back
// and running again. No database: units are never executed here, only queued and answered;
// the timers and the clock are the test's.
import pg from 'pg';
import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../delivery/testing.ts';
import { CallCancelled, OutcomeUnknown } from '../../../domain/store-errors.ts';
import { DeadlineExceeded } from '../deadlines.ts';
import { StoreOverloaded, UnitQueue, rerunDelayMs, type Attempt, type BulkStatement, type Unit } from './units.ts';

const attempt: Attempt<string> = async () => ({ value: 'never run here', notify: false, touched: null, committed: () => undefined });
const kind: BulkStatement<string, string> = { run: async () => [] };
const other: BulkStatement<string, string> = { run: async () => [] };
const deadlock = (): Error => Object.assign(new pg.DatabaseError('deadlock detected', 0, 'error'), { code: '40P01' });

let now: number;
let timers: FakeTimers;
let deadlineTimers: FakeTimers;
let queuedCalls: number;
let units: UnitQueue;

function open(o: { maxQueued?: number; maxRuns?: number } = {}): void {
  units = new UnitQueue({
    maxQueued: o.maxQueued ?? 10,
    queueWaitMs: 2_000,
    transactionMs: 4_000,
    maxRuns: o.maxRuns ?? 3,
    timers,
    deadlineTimers,
    now: () => now,
    log: pino({ level: 'silent' }),
    observer: () => null,
    queued: () => void (queuedCalls += 1),
  });
}

/** The error a promise rejects with. */
const failure = (p: Promise<unknown>): Promise<unknown> => p.then(() => null, (e: unknown) => e);

beforeEach(() => {
  now = 0;
  timers = new FakeTimers();
  deadlineTimers = new FakeTimers();
  queuedCalls = 0;
  open();
});

describe('the unit queue', () => {
  it('queues units in order and tells the loops of each; a batch takes at most maxBatch, oldest first', async () => {
    const answers = ['a', 'b', 'c'].map(() => units.admit(attempt, null));
    expect(units.length).toBe(3);
    expect(queuedCalls).toBe(3);
    const taken = units.take(2);
    expect(taken).toHaveLength(2);
    expect(units.length).toBe(1);
    taken[0]!.resolve('first');
    expect(await answers[0]).toBe('first');
  });

  it('refuses a unit at once when maxQueued wait already, and one whose signal is aborted', async () => {
    open({ maxQueued: 1 });
    void units.admit(attempt, null);
    expect(await failure(units.admit(attempt, null))).toBeInstanceOf(StoreOverloaded);
    expect(units.refused).toBe(1);
    const request = new AbortController();
    request.abort();
    expect(await failure(units.admit(attempt, null, request.signal))).toBeInstanceOf(CallCancelled);
    expect(units.length).toBe(1);
  });

  it('a queued unit answered by its signal leaves the queue unwritten (CallCancelled)', async () => {
    const request = new AbortController();
    const answer = units.admit(attempt, null, request.signal);
    request.abort();
    expect(await failure(answer)).toBeInstanceOf(CallCancelled);
    expect(units.length).toBe(0);
    expect(units.take(32)).toEqual([]);
  });

  it('a queued unit past its whole deadline (queue wait + transaction) leaves the queue unwritten and counts as refused', async () => {
    const answer = units.admit(attempt, null);
    expect(deadlineTimers.delays()).toEqual([6_000]);
    deadlineTimers.fireAll();
    expect(await failure(answer)).toBeInstanceOf(StoreOverloaded);
    expect(units.length).toBe(0);
    expect(units.refused).toBe(1);
  });

  it('a sent unit answered early hears OutcomeUnknown: caused by its signal, or by the store deadline', async () => {
    const request = new AbortController();
    const bySignal = units.admit(attempt, null, request.signal);
    const byDeadline = units.admit(attempt, null);
    for (const unit of units.take(32)) unit.sent = true;
    request.abort();
    deadlineTimers.fireAll();
    const [signalled, late] = [await failure(bySignal), await failure(byDeadline)];
    expect(signalled).toBeInstanceOf(OutcomeUnknown);
    expect((signalled as OutcomeUnknown).cause).toBeInstanceOf(CallCancelled);
    expect(late).toBeInstanceOf(OutcomeUnknown);
    expect((late as OutcomeUnknown).cause).toBeInstanceOf(DeadlineExceeded);
    expect(units.refused).toBe(0);
  });

  it('an answered unit clears its deadline: a later fire answers nothing twice', async () => {
    const answer = units.admit(attempt, null);
    units.take(1)[0]!.resolve('done');
    expect(await answer).toBe('done');
    expect(deadlineTimers.pending.size).toBe(0);
  });

  it('a batch does not take units that waited longer than queueWaitMs: they fail unwritten', async () => {
    const stale = units.admit(attempt, null);
    now = 1_000;
    void units.admit(attempt, null);
    now = 2_500;
    const taken = units.take(32);
    expect(taken.map((u) => u.queuedAt)).toEqual([1_000]);
    expect(await failure(stale)).toBeInstanceOf(StoreOverloaded);
    expect(units.refused).toBe(1);
  });

  it('loneNext: the units the next batch takes are all of one bulk kind', () => {
    expect(units.loneNext(32)).toBe(false);
    void units.admit(attempt, { kind, item: 'a' });
    void units.admit(attempt, { kind, item: 'b' });
    expect(units.loneNext(32)).toBe(true);
    void units.admit(attempt, { kind: other, item: 'c' });
    expect(units.loneNext(32)).toBe(false);
    // The third is beyond what a batch of two takes.
    expect(units.loneNext(2)).toBe(true);
  });

  it('units given back are first again, not sent, and wake no loop (the batch that gave them back goes on)', () => {
    void units.admit(attempt, null);
    void units.admit(attempt, null);
    const [first] = units.take(1) as [Unit];
    first.sent = true;
    queuedCalls = 0;
    units.putBack([first]);
    expect(units.take(32)[0]).toBe(first);
    expect(first.sent).toBe(false);
    expect(queuedCalls).toBe(0);
  });

  it('failAll fails every queued unit with the error given', async () => {
    const answers = [units.admit(attempt, null), units.admit(attempt, null)];
    const err = new Error('no connection');
    units.failAll(err);
    expect(await Promise.all(answers.map(failure))).toEqual([err, err]);
    expect(units.length).toBe(0);
  });

  it('a deadlocked unit runs again after a pause, first in the queue and judged from its new queueing; its runs are bounded', () => {
    void units.admit(attempt, null);
    void units.admit(attempt, null);
    const [unit] = units.take(1) as [Unit];
    unit.sent = true;
    queuedCalls = 0;
    expect(units.rerun(unit, deadlock())).toBe(true);
    expect(unit.sent).toBe(false);
    expect(units.length).toBe(1);
    expect(timers.pending.size).toBe(1);
    now = 3_000;
    timers.fireAll();
    expect(queuedCalls).toBe(1);
    expect(unit.queuedAt).toBe(3_000);
    expect(units.take(1)[0]).toBe(unit);
    expect(unit.runs).toBe(2);
    expect(units.rerun(unit, deadlock())).toBe(true);
    timers.fireAll();
    expect(units.take(1)[0]).toBe(unit);
    // maxRuns 3: no fourth run.
    expect(units.rerun(unit, deadlock())).toBe(false);
  });

  it('only a deadlock or serialization failure runs again, and never a unit whose caller was answered', async () => {
    const request = new AbortController();
    const answer = units.admit(attempt, null, request.signal);
    const [unit] = units.take(1) as [Unit];
    expect(units.rerun(unit, new Error('not retryable'))).toBe(false);
    expect(units.rerun(unit, deadlock())).toBe(true);
    // Answered while it waits for its pause: dropped, never queued again.
    request.abort();
    expect(await failure(answer)).toBeInstanceOf(CallCancelled);
    timers.fireAll();
    expect(units.length).toBe(0);
    expect(units.rerun(unit, deadlock())).toBe(false);
  });

  it('the pause before a run again grows with the runs, spread up to five times its floor', () => {
    expect([rerunDelayMs(1, () => 0), rerunDelayMs(1, () => 1), rerunDelayMs(3, () => 0), rerunDelayMs(3, () => 0.5)]).toEqual([5, 25, 15, 45]);
  });
});
