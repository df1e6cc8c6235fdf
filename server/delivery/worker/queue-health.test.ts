import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../domain/clock.ts';
import type { DeliveryQueue } from '../../domain/store.ts';
import { queueHealth, STALLED_AFTER_MS } from './queue-health.ts';

/** A queue whose calls are settled by the test. */
function controlledQueue() {
  const waiting: Array<{ resolve(v: unknown): void; reject(e: unknown): void }> = [];
  const call = (): Promise<never> => new Promise((resolve, reject) => waiting.push({ resolve: resolve as (v: unknown) => void, reject }));
  const queue = {
    claim: call,
    completeAndClaim: call,
    nextDueAt: call,
    release: call,
    stats: async () => ({ due: 0, leased: 0, waiting: 0, oldestDueAt: null }),
  } as unknown as DeliveryQueue;
  return { queue, next: () => waiting.shift()! };
}

describe('queue health', () => {
  it('is stalled from a failed call until a call succeeds, naming the call and the error', async () => {
    const clock = new ManualClock(1_000);
    const health = queueHealth(clock);
    const { queue, next } = controlledQueue();
    const observed = health.observe(queue);
    expect(health.stalled()).toBeNull();
    const claim = observed.claim({ owner: 'w', limit: 1, leaseMs: 30_000, perEndpointLimit: 1, now: 1_000 } as never).catch(() => undefined);
    next().reject(new Error('a PostgreSQL query got no answer within 3000 ms'));
    await claim;
    expect(health.stalled()).toMatch(/claim failed .*no answer within 3000 ms/);
    const again = observed.completeAndClaim('w', [], null);
    next().resolve({ applied: [], claimed: [] });
    await again;
    expect(health.stalled()).toBeNull();
    expect(health.lastClaimAt()).toBe(1_000);
  });

  it('is stalled while a call has waited STALLED_AFTER_MS, not before', async () => {
    const clock = new ManualClock(0);
    const health = queueHealth(clock);
    const { queue, next } = controlledQueue();
    const pending = health.observe(queue).nextDueAt();
    clock.advance(STALLED_AFTER_MS - 1);
    expect(health.stalled()).toBeNull();
    clock.advance(1);
    expect(health.stalled()).toMatch(/nextDueAt has waited 5 s/);
    next().resolve(null);
    await pending;
    expect(health.stalled()).toBeNull();
    expect(health.lastClaimAt()).toBeNull();
  });

  it('counts the claims and recorded batches that succeeded, and the deliveries they held', async () => {
    const health = queueHealth(new ManualClock(0));
    const { queue, next } = controlledQueue();
    const observed = health.observe(queue);
    const claim = observed.claim({} as never);
    next().resolve([{}, {}]);
    await claim;
    const completion = {} as never;
    const riding = observed.completeAndClaim('w', [completion, completion, completion], {} as never);
    next().resolve({ applied: [true, true, true], claimed: [{}], claimError: null });
    await riding;
    const failedClaim = observed.completeAndClaim('w', [completion], {} as never);
    next().resolve({ applied: [true], claimed: [], claimError: new Error('claim failed') });
    await failedClaim;
    const failed = observed.claim({} as never).catch(() => undefined);
    next().reject(new Error('unavailable'));
    await failed;
    expect(health.counts()).toEqual({ claims: 2, claimed: 3, batches: 2, recorded: 4 });
  });
});
