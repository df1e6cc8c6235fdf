import { describe, expect, it } from 'vitest';
import { FakeTimers, claimedDelivery } from '../testing.ts';
import { destinationHealth } from './health.ts';
import { toLease } from './lease.ts';
import { DEFAULT_BATCH_SIZE, resolveLimits } from './limits.ts';
import { createSweep } from './sweep.ts';

// The small parts: limits, destination health, the slow sweep.

describe('limits', () => {
  it('defaults: batches of 100, 64 in flight, 4 per destination, a lease of the deadline + 20 s', () => {
    expect(resolveLimits({}, 10_000)).toEqual({
      batchSize: DEFAULT_BATCH_SIZE,
      concurrency: 64,
      slowConcurrency: 1_024,
      slowAfterMs: 100,
      perEndpointLimit: 4,
      maxPerEndpointLimit: 32,
      healthyLatencyMs: 500,
      prefetchPerEndpoint: 256,
      timeoutMs: 10_000,
      leaseMs: 30_000,
      maxHeld: 64 + 100 * 2,
      refillBelow: 128,
    });
    expect(DEFAULT_BATCH_SIZE).toBe(100);
  });

  it('the adaptive limit: its max is at least its start, and the prefetch at least 8 × the max', () => {
    expect(resolveLimits({ perEndpointLimit: 40 }, 1_000)).toMatchObject({ perEndpointLimit: 40, maxPerEndpointLimit: 40, prefetchPerEndpoint: 64 * 40, refillBelow: 32 * 40 });
    expect(resolveLimits({ perEndpointLimit: 1 }, 1_000)).toMatchObject({ perEndpointLimit: 1, maxPerEndpointLimit: 32, prefetchPerEndpoint: 256, refillBelow: 128 });
    expect(resolveLimits({ perEndpointLimit: 2, maxPerEndpointLimit: 2 }, 1_000)).toMatchObject({ maxPerEndpointLimit: 2, prefetchPerEndpoint: 128, refillBelow: 64 });
  });

  it('refuses what would let a lease end during an attempt, and nonsense', () => {
    expect(() => resolveLimits({ timeoutMs: 10_000, leaseMs: 15_000 }, 10_000)).toThrow(/leaseMs/);
    expect(() => resolveLimits({ timeoutMs: 10_000, leaseMs: 15_001 }, 10_000)).not.toThrow();
    expect(() => resolveLimits({ timeoutMs: 1_000 }, 10_000)).toThrow(/timeoutMs/);
    expect(() => resolveLimits({ perEndpointLimit: 8, prefetchPerEndpoint: 4 }, 1_000)).toThrow(/prefetchPerEndpoint/);
    expect(() => resolveLimits({ maxPerEndpointLimit: 16, prefetchPerEndpoint: 8 }, 1_000)).toThrow(/prefetchPerEndpoint \(8\) must be at least maxPerEndpointLimit \(16\)/);
    expect(() => resolveLimits({ perEndpointLimit: 8, maxPerEndpointLimit: 4 }, 1_000)).toThrow(/maxPerEndpointLimit \(4\) must be at least perEndpointLimit \(8\)/);
    expect(() => resolveLimits({ healthyLatencyMs: 0 }, 1_000)).toThrow(/healthyLatencyMs/);
    expect(() => resolveLimits({ batchSize: 0 }, 1_000)).toThrow(/batchSize/);
    expect(() => resolveLimits({ concurrency: 1.5 }, 1_000)).toThrow(/concurrency/);
  });
});

describe('destination health', () => {
  it('suspects a destination that failed here last, or a retry to one that never answered here', () => {
    const health = destinationHealth();
    const fresh = toLease(claimedDelivery({ endpointId: 'a' }));
    const retry = toLease(claimedDelivery({ endpointId: 'a', attemptCount: 2 }));
    expect([health.suspect(fresh), health.suspect(retry), health.answered('e:a')]).toEqual([false, true, false]);
    health.remember('e:a', true);
    expect([health.suspect(fresh), health.suspect(retry), health.answered('e:a')]).toEqual([false, false, true]);
    health.remember('e:a', false);
    expect([health.suspect(fresh), health.suspect(retry), health.answered('e:a')]).toEqual([true, true, false]);
  });

  it('forgets everything rather than grow past its size', () => {
    const health = destinationHealth(2);
    health.remember('e:a', true);
    health.remember('e:b', true);
    health.remember('e:a', true); // known: kept
    expect(health.answered('e:b')).toBe(true);
    health.remember('e:c', true);
    expect([health.answered('e:a'), health.answered('e:b'), health.answered('e:c')]).toEqual([false, false, true]);
  });
});

describe('slow sweep', () => {
  it('arms once, moves what was launched when it was armed after slowAfterMs, and has the pump look', () => {
    const timers = new FakeTimers();
    const moves: number[] = [];
    let seq = 3;
    let slowFull = false;
    let moved = 0;
    const sweep = createSweep({ timers, slowAfterMs: 100, dispatcher: { moveToSlow: (upTo) => void moves.push(upTo), slowFull: () => slowFull, lastSeq: () => seq }, moved: () => void (moved += 1) });
    sweep.arm();
    seq = 5;
    sweep.arm();
    expect(timers.delays()).toEqual([100]);
    timers.fireAll();
    expect(moves).toEqual([3]);
    expect(moved).toBe(1);
    slowFull = true;
    sweep.arm();
    expect(timers.pending.size).toBe(0);
    slowFull = false;
    sweep.arm();
    sweep.cancel();
    expect(timers.pending.size).toBe(0);
  });
});
