import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../domain/clock.ts';
import { FakeTimers, captureLogger, claimedDelivery } from '../testing.ts';
import type { Attempted } from './attempt.ts';
import { COMPLETE_LINGER_MIN, COMPLETE_LINGER_MS, LEASE_ENDED, createCompleter, type Completer } from './completer.ts';
import { toLease } from './lease.ts';
import { ERROR_BACKOFF_MS } from './timers.ts';

// The completer alone: a fake write (which may fail), fake timers for the linger and the
// back-off, and the real event loop for "one turn".

let clock: ManualClock;
let timers: FakeTimers;
let writes: string[][];
let failNext: number;
let settled: Array<[string, boolean, string | undefined]>;
let written: number;
let lingering: boolean;
let completer: Completer;

function done(leaseMs = 30_000): Attempted {
  const lease = toLease(claimedDelivery({ leaseExpiresAt: clock.now() + leaseMs }));
  const attempt = { deliveryId: lease.delivery.id, cycle: 1, number: 1, startedAt: 0, durationMs: 1, signatureTimestamp: 0, outcome: 'response' as const, statusCode: 200, errorClass: null, responseBody: null, success: true };
  return { lease, completion: { deliveryId: lease.delivery.id, leaseExpiresAt: lease.delivery.leaseExpiresAt!, result: { attempt, state: 'delivered', nextAttemptAt: null, deliveredAt: 0 } }, summary: {} };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

beforeEach(() => {
  clock = new ManualClock();
  timers = new FakeTimers();
  writes = [];
  failNext = 0;
  settled = [];
  written = 0;
  lingering = false;
  completer = createCompleter({
    timers,
    clock,
    log: captureLogger().log,
    lingering: () => lingering,
    async write(batch) {
      writes.push(batch.map((b) => b.completion.deliveryId));
      if (failNext > 0) {
        failNext -= 1;
        throw new Error('database unavailable');
      }
      return { applied: batch.map((_, i) => i !== 1) }; // the second of each batch lost its lease
    },
    settle: (d, ok, message) => void settled.push([d.completion.deliveryId, ok, message]),
    written: async () => void (written += 1),
  });
});

describe('batch completer', () => {
  it('records at once when nothing else is in flight, attempts of one turn in one write', async () => {
    const [a, b, c] = [done(), done(), done()];
    completer.record(a);
    completer.record(b);
    completer.record(c);
    await vi.waitFor(() => expect(written).toBe(1));
    expect(writes).toEqual([[a, b, c].map((x) => x.completion.deliveryId)]);
    expect(settled.map(([, ok]) => ok)).toEqual([true, false, true]);
    expect(timers.pending.size).toBe(0);
  });

  it('while others are in flight, lingers for COMPLETE_LINGER_MIN attempts or COMPLETE_LINGER_MS', async () => {
    lingering = true;
    completer.record(done());
    completer.record(done());
    await turn();
    await turn();
    expect(writes).toEqual([]);
    expect(timers.delays()).toEqual([COMPLETE_LINGER_MS]);
    timers.fireAll();
    await vi.waitFor(() => expect(written).toBe(1));
    expect(writes[0]).toHaveLength(2);

    for (let i = 0; i < COMPLETE_LINGER_MIN; i++) completer.record(done());
    await vi.waitFor(() => expect(written).toBe(2));
    expect(writes[1]).toHaveLength(COMPLETE_LINGER_MIN);
    expect(timers.pending.size).toBe(0); // the linger timer was cleared: enough had finished
  });

  it('after a failed write, keeps what its lease covers, drops the rest, and retries after a doubling back-off', async () => {
    failNext = 2;
    const live = done(30_000);
    const ending = done(10);
    completer.record(live);
    completer.record(ending);
    await vi.waitFor(() => expect(timers.delays()).toEqual([ERROR_BACKOFF_MS]));
    clock.advance(10); // the second lease has ended by the time the write failed
    expect(settled).toEqual([]);
    timers.fireAll();
    await vi.waitFor(() => expect(timers.delays()).toEqual([ERROR_BACKOFF_MS * 2]));
    expect(settled).toEqual([[ending.completion.deliveryId, false, LEASE_ENDED]]);
    timers.fireAll();
    await vi.waitFor(() => expect(written).toBe(1));
    expect(writes.at(-1)).toEqual([live.completion.deliveryId]);
    expect(settled.at(-1)).toEqual([live.completion.deliveryId, true, undefined]);
  });

  it('idle() writes what lingers and retries a failed write now instead of after the back-off', async () => {
    lingering = true;
    completer.record(done());
    await turn();
    expect(writes).toEqual([]);
    await completer.idle();
    expect(writes).toHaveLength(1);

    lingering = false;
    failNext = 1;
    completer.record(done());
    await vi.waitFor(() => expect(timers.delays()).toEqual([ERROR_BACKOFF_MS]));
    await completer.idle();
    expect(writes).toHaveLength(3);
    expect(written).toBe(2);
    expect(timers.pending.size).toBe(0);
  });
});
