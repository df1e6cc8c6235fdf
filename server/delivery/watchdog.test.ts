import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../domain/clock.ts';
import { FakeTimers } from './testing.ts';
import { createWatchdog, WATCHDOG_MS } from './watchdog.ts';

function setUp(state: { stalled: string | null; lastClaimAt: number | null }) {
  const clock = new ManualClock(100_000);
  const timers = new FakeTimers();
  const calls = { wake: 0, reset: 0 };
  const watchdog = createWatchdog({
    worker: { stalled: () => state.stalled, lastClaimAt: () => state.lastClaimAt, wake: () => void calls.wake++ },
    queue: { reset: () => void calls.reset++ },
    clock,
    timers,
    log: pino({ level: 'silent' }),
  });
  return { clock, timers, calls, watchdog };
}

describe('delivery watchdog', () => {
  it('resets the queue connections and wakes the worker while delivery is stalled', () => {
    const state = { stalled: 'claim failed' as string | null, lastClaimAt: null };
    const { timers, calls, watchdog } = setUp(state);
    watchdog.start();
    expect(timers.delays()).toEqual([WATCHDOG_MS]);
    timers.fireAll();
    expect(calls).toEqual({ wake: 1, reset: 1 });
    state.stalled = null;
    timers.fireAll();
    expect(calls.reset).toBe(1);
  });

  it('has the worker look when no claim succeeded for WATCHDOG_MS, and leaves a busy one alone', () => {
    const state = { stalled: null, lastClaimAt: 100_000 as number | null };
    const { clock, timers, calls, watchdog } = setUp(state);
    watchdog.start();
    timers.fireAll();
    expect(calls.wake).toBe(0);
    clock.advance(WATCHDOG_MS);
    timers.fireAll();
    expect(calls).toEqual({ wake: 1, reset: 0 });
    watchdog.stop();
    expect(timers.delays()).toEqual([]);
  });
});
