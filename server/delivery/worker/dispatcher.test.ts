import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../domain/clock.ts';
import { claimedDelivery } from '../testing.ts';
import { createDispatcher, type Budget, type Dispatcher, type Slot } from './dispatcher.ts';
import { destinationHealth, type DestinationHealth } from './health.ts';
import { createPace, type Pace } from './pace.ts';
import type { Lease } from './lease.ts';
import { PREFETCH_MAX_WAIT_MS, SEND_MARGIN_MS, resolveLimits, type LimitOptions, type Limits } from './limits.ts';

// The dispatcher alone: fake hooks record what it starts and gives back; no I/O, no waiting.

let clock: ManualClock;
let health: DestinationHealth;
let limits: Limits;
let started: Slot[];
let expired: Lease[];
let sharedFull: number;
let wakes: number[];
let pace: Pace;
let d: Dispatcher<Slot>;

function dispatcher(opts: LimitOptions): void {
  limits = resolveLimits({ timeoutMs: 1_000, ...opts }, 1_000);
  d = createDispatcher<Slot>({
    limits,
    health,
    clock,
    pace,
    hooks: {
      start: (lease: Lease, budget: Budget, seq: number) => {
        const slot = { lease, budget, seq };
        started.push(slot);
        return slot;
      },
      expired: (leases) => expired.push(...leases),
      sharedFull: () => void (sharedFull += 1),
      wakeAt: (at) => void wakes.push(at),
    },
  });
}

/** `n` deliveries to endpoint `ep`, freshly leased now. */
const batch = (ep: string, n: number, o: { attemptCount?: number } = {}) =>
  Array.from({ length: n }, () => claimedDelivery({ endpointId: ep, leaseExpiresAt: clock.now() + limits.leaseMs, ...o }));

const dests = (slots: Slot[]): string[] => slots.map((s) => s.lease.dest);

beforeEach(() => {
  clock = new ManualClock();
  health = destinationHealth();
  started = [];
  expired = [];
  sharedFull = 0;
  wakes = [];
  pace = createPace();
});

describe('dispatcher', () => {
  it('starts at most perEndpointLimit per destination and concurrency in all; the rest wait ready', () => {
    dispatcher({ concurrency: 3, perEndpointLimit: 2 });
    d.take([...batch('a', 3), ...batch('b', 2)]);
    expect(dests(started)).toEqual(['e:a', 'e:a', 'e:b']);
    expect(started.every((s) => s.budget === 'shared')).toBe(true);
    expect([d.readyAt('e:a'), d.readyAt('e:b')]).toEqual([1, 1]);
    expect(d.sending().size).toBe(3);
    expect(d.sharedInFlight()).toBe(3);
    expect(sharedFull).toBeGreaterThan(0); // a full shared budget arms the sweep

    // A freed slot at a: the next delivery of a starts (b is at no limit of its own, but the budget was full).
    expect(d.freeSlot(started[0]!)).toBe(true);
    expect(dests(started.slice(3))).toEqual(['e:a']);
    expect(d.freeSlot(started[0]!)).toBe(false); // freed once only
    expect(d.sending().size).toBe(3);
  });

  it("adapts a destination's limit to its answers: a window of healthy ones adds a send, an overload halves it", () => {
    dispatcher({ concurrency: 16, perEndpointLimit: 2, maxPerEndpointLimit: 3, healthyLatencyMs: 500 });
    const ok = { success: true, statusCode: 200, durationMs: 5 };
    d.take(batch('a', 20));
    expect(dests(started)).toEqual(['e:a', 'e:a']);
    // Two healthy answers while both slots were busy: a window of 2, the limit is 3 before the freed slot is reused.
    d.freeSlot(started[0]!, ok);
    expect(d.limitOf('e:a')).toBe(2);
    expect(d.sending().size).toBe(2);
    d.freeSlot(started[1]!, ok);
    expect(d.limitOf('e:a')).toBe(3);
    expect(d.sending().size).toBe(3);
    // At the max: no further.
    for (let i = 2; i < 8; i++) d.freeSlot(started[i]!, ok);
    expect([d.limitOf('e:a'), d.sending().size]).toEqual([3, 3]);
    // A 503 halves it: the two others in flight answer, the freed slots are not reused until below 1.
    d.freeSlot(started[8]!, { success: false, statusCode: 503, durationMs: 5 });
    expect(d.limitOf('e:a')).toBe(1);
    expect(d.sending().size).toBe(2);
    // Those two were in flight when it halved: a slow answer among them does not halve it again.
    d.freeSlot(started[9]!, { success: true, statusCode: 200, durationMs: 501 });
    expect([d.limitOf('e:a'), d.sending().size]).toEqual([1, 1]);
    // An attempt freed without an answer (abandoned, broken) teaches nothing.
    d.freeSlot(started[10]!);
    expect([d.limitOf('e:a'), d.sending().size]).toEqual([1, 1]);
    expect(d.limitOf('e:b')).toBe(2); // each destination its own
  });

  it('spreads by the adapted limit of the destinations it holds, and by the start for new ones', () => {
    dispatcher({ concurrency: 8, perEndpointLimit: 2, maxPerEndpointLimit: 8 });
    d.take(batch('a', 10));
    expect(d.spread()).toEqual({ slots: 6, perDestination: 2 });
    const ok = { success: true, statusCode: 200, durationMs: 5 };
    d.freeSlot(started[0]!, ok);
    d.freeSlot(started[1]!, ok); // a's limit is 3, and 3 are sending
    expect(d.limitOf('e:a')).toBe(3);
    expect(d.spread()).toEqual({ slots: 5, perDestination: 2 });
  });

  it('sends to a suspect destination one attempt at a time from the slow budget', () => {
    dispatcher({ concurrency: 2, perEndpointLimit: 4, slowConcurrency: 8 });
    health.remember('e:down', false);
    d.take([...batch('down', 3), ...batch('new-retry', 2, { attemptCount: 1 }), ...batch('fresh', 1)]);
    const bySlot = started.map((s) => [s.lease.dest, s.budget]);
    expect(bySlot).toEqual([
      ['e:down', 'slow'],
      ['e:new-retry', 'slow'], // no outcome here and a retry: suspect too
      ['e:fresh', 'shared'],
    ]);
    expect(d.sharedInFlight()).toBe(1);
    // Its next goes only once the one in flight is answered.
    health.remember('e:down', false);
    d.freeSlot(started[0]!);
    expect(started.at(-1)).toMatchObject({ budget: 'slow', lease: { dest: 'e:down' } });
    expect(d.readyAt('e:down')).toBe(1);
  });

  it('sends first to destinations that answered here last', () => {
    dispatcher({ concurrency: 1 });
    health.remember('e:good', true);
    d.take([...batch('unknown', 1), ...batch('good', 1)]);
    expect(dests(started)).toEqual(['e:good']);
  });

  it('holds leases as a set: taking adds, letting go removes each lease once', () => {
    dispatcher({ concurrency: 1 });
    d.take(batch('a', 3));
    expect(d.held()).toBe(3);
    const lease = started[0]!.lease;
    d.freeSlot(started[0]!); // the slot is free, the lease still held (waiting to be recorded)
    expect(d.held()).toBe(3);
    d.letGo(lease);
    d.letGo(lease); // e.g. recorded, then let go again on an unexpected error path: counted once
    expect(d.held()).toBe(2);
  });

  it('gives back a prefetched delivery whose lease is too short to cover an attempt, or that waited too long', () => {
    dispatcher({ concurrency: 1 });
    const short = claimedDelivery({ endpointId: 'a', leaseExpiresAt: clock.now() + limits.timeoutMs + SEND_MARGIN_MS - 1 });
    d.take([short]);
    expect(started).toEqual([]);
    expect(expired.map((l) => l.delivery.id)).toEqual([short.delivery.id]);
    expect(d.held()).toBe(0);

    d.take(batch('b', 2)); // one sends, one waits for the slot
    clock.advance(PREFETCH_MAX_WAIT_MS + 1);
    d.freeSlot(started[0]!);
    expect(started).toHaveLength(1);
    expect(expired).toHaveLength(2);
    expect(d.held()).toBe(1); // the attempt's lease only
  });

  it('spreads claims only to the shared slots what it holds cannot fill', () => {
    dispatcher({ concurrency: 4, perEndpointLimit: 2 });
    expect(d.spread()).toEqual({ slots: 4, perDestination: 2 });
    d.take(batch('a', 5)); // 2 sending, 3 ready that a's limit keeps waiting
    expect(d.spread()).toEqual({ slots: 2, perDestination: 2 });
    d.take(batch('b', 1));
    expect(d.spread()).toEqual({ slots: 1, perDestination: 2 });
    // A suspect destination's ready deliveries go to the slow budget: they fill no shared slot.
    health.remember('e:down', false);
    d.take(batch('down', 3));
    expect(d.spread()).toEqual({ slots: 1, perDestination: 2 });
  });

  it('sizes claims by the leases held, less the slow budget, and those about to be recorded', () => {
    dispatcher({ concurrency: 2, batchSize: 10, slowConcurrency: 4 });
    expect(limits.maxHeld).toBe(2 + 10 * 2);
    expect(d.claimRoom()).toBe(10);
    d.take(batch('a', 18));
    expect(d.claimRoom()).toBe(22 - 18);
    expect(d.claimRoom(3)).toBe(22 - 15);
    health.remember('e:down', false);
    d.take(batch('down', 3)); // one sending and two ready in the slow budget: not counted
    expect(d.claimRoom()).toBe(4);
    d.take(batch('b', 10));
    expect(d.claimRoom()).toBe(0);
  });

  it('moves open shared attempts launched up to a point to the slow budget, and starts what waited', () => {
    dispatcher({ concurrency: 1, slowConcurrency: 1 });
    d.take([...batch('hang', 1), ...batch('ok', 1)]);
    expect(dests(started)).toEqual(['e:hang']);
    d.moveToSlow(d.lastSeq());
    expect(started[0]!.budget).toBe('slow');
    expect(dests(started)).toEqual(['e:hang', 'e:ok']);
    expect(d.slowFull()).toBe(true);
    // The slow budget is full: nothing more moves.
    d.moveToSlow(d.lastSeq());
    expect(started[1]!.budget).toBe('shared');
  });

  it('on stop starts nothing more, and hands the ready leases back as no longer held', () => {
    dispatcher({ concurrency: 1 });
    d.take(batch('a', 3));
    d.stop();
    d.freeSlot(started[0]!);
    expect(started).toHaveLength(1);
    const ready = d.drainReady();
    expect(ready).toHaveLength(2);
    expect(d.held()).toBe(1);
    expect(d.readyAt('e:a')).toBe(0);
  });

  it('keys a payout callback by its url', () => {
    dispatcher({ concurrency: 2, perEndpointLimit: 1 });
    d.take([claimedDelivery({ endpointId: null, url: 'https://payouts.example/cb', leaseExpiresAt: clock.now() + limits.leaseMs })]);
    expect(dests(started)).toEqual(['u:https://payouts.example/cb']);
  });

  it('holds a paused destination back until its pace opens, asks to be woken then, and gives back what would be too old by then', () => {
    dispatcher({ concurrency: 8, perEndpointLimit: 4 });
    pace.pause('e:a', clock.now() + 1_000);
    d.take([...batch('a', 2), ...batch('b', 1)]);
    expect(dests(started)).toEqual(['e:b']);
    expect(wakes).toEqual([clock.now() + 1_000]);
    expect(d.readyAt('e:a')).toBe(2);
    // A pause past PREFETCH_MAX_WAIT_MS: the held leases could not be sent by then, so they go back now.
    pace.pause('e:a', clock.now() + PREFETCH_MAX_WAIT_MS + 1);
    d.dispatch();
    expect(expired.map((l) => l.dest)).toEqual(['e:a', 'e:a']);
    expect(d.readyAt('e:a')).toBe(0);
  });

  it("spaces a capped destination's sends by its maxPerSecond, one per wake-up", () => {
    dispatcher({ concurrency: 8, perEndpointLimit: 4 });
    d.take(batch('a', 3).map((c) => ({ ...c, maxPerSecond: 10 })));
    expect(started).toHaveLength(1);
    expect(wakes.at(-1)).toBe(clock.now() + 100);
    clock.advance(100);
    d.dispatch();
    expect(started).toHaveLength(2);
    expect(wakes.at(-1)).toBe(clock.now() + 100);
  });
});
