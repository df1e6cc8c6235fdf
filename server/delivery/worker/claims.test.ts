import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../domain/clock.ts';
import type { ClaimOptions, ClaimedDelivery, Completion } from '../../domain/store.ts';
import { claimedDelivery } from '../testing.ts';
import type { Attempted } from './attempt.ts';
import { CLAIM_AT_LEAST_EVERY_MS, createClaims, type Claims } from './claims.ts';
import { toLease } from './lease.ts';
import { resolveLimits } from './limits.ts';

// Claims alone: a fake queue that records every claim, a fake dispatcher's counts.

let clock: ManualClock;
let claimOptions: Array<ClaimOptions | null>;
let toClaim: ClaimedDelivery[];
let claimError: Error | null;
let room: number;
let readyAt: Map<string, number>;
let held: number;
let taken: ClaimedDelivery[][];
let givenBack: string[][];
let pumps: number;
let running: boolean;
let claims: Claims;
const limits = resolveLimits({ timeoutMs: 1_000, perEndpointLimit: 4, prefetchPerEndpoint: 64 }, 1_000);

const attempted = (ep: string): Attempted => {
  const lease = toLease(claimedDelivery({ endpointId: ep }));
  return { lease, completion: { deliveryId: lease.delivery.id } as Completion, summary: {} };
};

beforeEach(() => {
  clock = new ManualClock();
  claimOptions = [];
  toClaim = [];
  claimError = null;
  room = 10;
  readyAt = new Map();
  held = 0;
  taken = [];
  givenBack = [];
  pumps = 0;
  running = true;
  claims = createClaims({
    queue: {
      claim: async (o) => (claimOptions.push(o), toClaim.splice(0)),
      completeAndClaim: async (_owner, completions, o) => {
        claimOptions.push(o);
        return { applied: completions.map(() => true), claimed: o === null ? [] : toClaim.splice(0), claimError };
      },
    },
    owner: 'w1',
    limits,
    clock,
    dispatcher: {
      claimRoom: (recording = 0) => Math.min(limits.batchSize, room + recording),
      spread: () => ({ slots: 3, perDestination: 4 }),
      take: (batch) => void taken.push([...batch]),
      readyAt: (dest) => readyAt.get(dest) ?? 0,
      held: () => held,
    },
    running: () => running,
    giveBack: async (ids) => (givenBack.push([...ids]), true),
    pump: () => void (pumps += 1),
  });
});

describe('claims', () => {
  it("the pump's claim: as many as there is room for, exclusive, with the prefetch limit and the spread", async () => {
    toClaim = [claimedDelivery(), claimedDelivery()];
    expect(await claims.claim()).toEqual({ claimed: 2, limit: 10, at: clock.now() });
    expect(claimOptions).toEqual([{ owner: 'w1', now: clock.now(), leaseMs: limits.leaseMs, limit: 10, perEndpointLimit: 64, exclusive: true, spread: { slots: 3, perDestination: 4 } }]);
    expect(taken[0]).toHaveLength(2);
    room = 0;
    expect(await claims.claim()).toEqual({ claimed: 0, limit: 0, at: clock.now() });
    expect(claimOptions).toHaveLength(1); // no room: no store call
  });

  it('a claim rides with a batch when one of its destinations runs low or the last claim is old enough', async () => {
    await claims.claim(); // found nothing
    readyAt.set('e:busy', limits.refillBelow);
    // Just after a claim that found nothing: none rides along, whatever runs low.
    await claims.record([attempted('low')]);
    expect(claimOptions.at(-1)).toBeNull();
    clock.advance(CLAIM_AT_LEAST_EVERY_MS);
    toClaim = [claimedDelivery()];
    const r = await claims.record([attempted('busy')]);
    expect(claimOptions.at(-1)).toMatchObject({ limit: 11, exclusive: true }); // sized for the room the batch frees
    expect(r).toMatchObject({ wanted: true, refill: true, limit: 11 });
    // Right after a claim that found something: only a destination running low claims again.
    await claims.afterRecord(r);
    await claims.record([attempted('busy')]);
    expect(claimOptions.at(-1)).toBeNull();
    await claims.record([attempted('busy'), attempted('low')]);
    expect(claimOptions.at(-1)).not.toBeNull();
  });

  it('after a batch: holds what was claimed, and has the pump go on only when it should', async () => {
    held = 5;
    toClaim = [claimedDelivery(), claimedDelivery()];
    const partial = await claims.record([attempted('a')]);
    await claims.afterRecord(partial);
    expect(taken.at(-1)).toHaveLength(2);
    expect(pumps).toBe(0); // not full, leases held: the next batch claims again

    for (const [setup, why] of [
      [() => (toClaim = Array.from({ length: 11 }, () => claimedDelivery())), 'the claim was full'],
      [() => (claimError = new Error('claim failed')), 'the claim failed'],
      [() => (room = -1), 'no claim was made'],
      [() => (held = 0), 'nothing is held'],
    ] as const) {
      clock.advance(CLAIM_AT_LEAST_EVERY_MS);
      setup();
      const before = pumps;
      await claims.afterRecord(await claims.record([attempted('a')]));
      expect(pumps, why).toBe(before + 1);
      [claimError, room, held] = [null, 10, 5];
    }
  });

  it('stopping meanwhile: what rode along is given back, not held', async () => {
    toClaim = [claimedDelivery({ id: 'dlv_late' })];
    const r = await claims.record([attempted('a')]);
    running = false;
    await claims.afterRecord(r);
    expect(givenBack).toEqual([['dlv_late']]);
    expect(taken).toEqual([]);
  });
});
