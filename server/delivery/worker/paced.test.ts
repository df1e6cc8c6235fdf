// The worker's pacing part under fake timers, with a recording queue: one wake-up for the
// earliest open time, and leases given back with their destinations' pauses written first.
import { expect, it } from 'vitest';
import { captureLogger, claimedDelivery, FakeTimers } from '../testing.ts';
import { toLease } from './lease.ts';
import { createPace } from './pace.ts';
import { createPacing } from './paced.ts';

function setup(pauseFails = false) {
  let now = 10_000;
  const timers = new FakeTimers();
  const calls: string[] = [];
  let dispatched = 0;
  const logger = captureLogger();
  const pace = createPace();
  const pacing = createPacing({
    pace,
    timers,
    clock: { now: () => now },
    log: logger.log,
    queue: {
      pause: async (dest, until) => {
        calls.push(`pause ${dest} ${until}`);
        if (pauseFails) throw new Error('store down');
      },
    },
    giveBack: async (ids) => {
      calls.push(`giveBack ${ids.join(',')}`);
      return true;
    },
    dispatch: () => (dispatched += 1),
  });
  return { pacing, pace, timers, calls, logger, dispatched: () => dispatched, advance: (ms: number) => (now += ms) };
}

it('arms one wake-up, for the earliest open time: a later one keeps it, an earlier one replaces it', () => {
  const { pacing, timers, dispatched } = setup();
  pacing.wakeAt(12_000);
  expect(timers.delays()).toEqual([2_000]);
  pacing.wakeAt(15_000);
  expect(timers.delays()).toEqual([2_000]);
  pacing.wakeAt(10_500);
  expect(timers.delays()).toEqual([500]);
  timers.fireAll();
  expect(dispatched()).toBe(1);
  // Fired: the next one arms again, even a later one; a time already past waits 0 ms.
  pacing.wakeAt(9_000);
  expect(timers.delays()).toEqual([0]);
  pacing.stop();
  expect(timers.delays()).toEqual([]);
});

it('gives leases back after writing the pauses of the destinations still held back, only those', async () => {
  const { pacing, pace, calls } = setup();
  const held = toLease(claimedDelivery({ id: 'd1', endpointId: 'ep_held' }));
  const open = toLease(claimedDelivery({ id: 'd2', endpointId: 'ep_open' }));
  pace.pause(held.dest, 13_000);
  pace.pause(open.dest, 9_000);
  await pacing.giveBack([held, open, { ...held, delivery: { ...held.delivery, id: 'd3' } }]);
  expect(calls).toEqual([`pause ${held.dest} 13000`, 'giveBack d1,d2,d3']);
});

it('a pause the store refuses is logged, and the leases still go back', async () => {
  const { pacing, pace, calls, logger } = setup(true);
  const held = toLease(claimedDelivery({ id: 'd1', endpointId: 'ep_held' }));
  pace.pause(held.dest, 13_000);
  await pacing.giveBack([held]);
  expect(calls).toEqual([`pause ${held.dest} 13000`, 'giveBack d1']);
  expect(logger.lines.some((l) => l.includes("could not record the destination's pause"))).toBe(true);
});
