import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../domain/clock.ts';
import { FakeTimers, captureLogger } from '../testing.ts';
import type { ClaimRound } from './claims.ts';
import { BLOCKED_RECHECK_MS, createPump, type Pump } from './pump.ts';
import { ERROR_BACKOFF_MS, MAX_IDLE_MS } from './timers.ts';

// The pump alone: scripted claims and due times, fake timers for its sleeps.

let clock: ManualClock;
let timers: FakeTimers;
let rounds: Array<Partial<ClaimRound> | Error>;
let claims: number;
let holding: boolean;
let due: number | null;
let logs: ReturnType<typeof captureLogger>;
let pump: Pump;

beforeEach(() => {
  clock = new ManualClock();
  timers = new FakeTimers();
  rounds = [];
  claims = 0;
  holding = false;
  due = null;
  logs = captureLogger();
  pump = createPump({
    timers,
    clock,
    log: logs.log,
    async claim() {
      claims += 1;
      const next = rounds.shift() ?? {};
      if (next instanceof Error) throw next;
      return { claimed: 0, limit: 10, at: clock.now(), ...next };
    },
    holding: () => holding,
    nextDueAt: async () => due,
  });
});

/** Resolves once the pump sleeps, with how long. */
async function sleeps(): Promise<number[]> {
  await vi.waitFor(() => expect(timers.pending.size).toBe(1));
  return timers.delays();
}

describe('pump', () => {
  it('claims again while claims come back full, then sleeps until the next due time', async () => {
    rounds = [{ claimed: 10 }, { claimed: 10 }, { claimed: 3 }];
    due = clock.now() + 500;
    pump.start();
    expect(await sleeps()).toEqual([500]);
    expect(claims).toBe(3);
  });

  it('sleeps MAX_IDLE_MS when nothing is pending, and never longer', async () => {
    pump.start();
    expect(await sleeps()).toEqual([MAX_IDLE_MS]);
    due = clock.now() + 10 * MAX_IDLE_MS;
    pump.request();
    expect(await sleeps()).toEqual([MAX_IDLE_MS]);
  });

  it('while it holds leases, returns without sleeping: the completer has it go on', async () => {
    holding = true;
    rounds = [{ claimed: 2 }];
    pump.start();
    await vi.waitFor(() => expect(claims).toBe(1));
    await pump.stop();
    expect(timers.pending.size).toBe(0);
  });

  it('with no room, does not claim again until asked', async () => {
    rounds = [{ limit: 0 }];
    pump.start();
    await pump.stop();
    expect(claims).toBe(1);
    expect(timers.pending.size).toBe(0);
  });

  it('due but not claimable: looks again at once if it became due after the claim looked, else in BLOCKED_RECHECK_MS', async () => {
    rounds = [{ at: clock.now() - 1 }, { at: clock.now() }];
    due = clock.now();
    pump.start();
    expect(await sleeps()).toEqual([BLOCKED_RECHECK_MS]);
    expect(claims).toBe(2);
  });

  it('backs off on a store error, doubling, and resets once the store answers', async () => {
    rounds = [new Error('db down'), new Error('db down')];
    pump.start();
    expect(await sleeps()).toEqual([ERROR_BACKOFF_MS]);
    timers.fireAll();
    expect(await sleeps()).toEqual([ERROR_BACKOFF_MS * 2]);
    timers.fireAll();
    expect(await sleeps()).toEqual([MAX_IDLE_MS]);
    expect(logs.lines.filter((l) => l.includes('delivery queue unavailable'))).toHaveLength(2);
  });

  it('a request during a look has it look again; a stopped pump neither claims nor sleeps', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    rounds = [];
    const slow = createPump({
      timers,
      clock,
      log: logs.log,
      async claim() {
        claims += 1;
        if (claims === 1) await gate;
        return { claimed: 0, limit: 10, at: clock.now() };
      },
      holding: () => false,
      nextDueAt: async () => null,
    });
    slow.start();
    slow.request();
    release();
    expect(await sleeps()).toEqual([MAX_IDLE_MS]);
    expect(claims).toBe(2);
    await slow.stop();
    expect(timers.pending.size).toBe(0);
    slow.request();
    expect(claims).toBe(2);
  });
});
