// Claims: how many deliveries to lease and how far to spread, for the pump's own claims and for
// those riding with a recorded batch (completeAndClaim: one store call that records the batch
// and claims into the leases it freed).
//
// A claim rides with a batch only when one of the batch's destinations has fewer than
// `refillBelow` deliveries ready, or the last claim is CLAIM_AT_LEAST_EVERY_MS old: a
// destination draining a backlog then refills its prefetch in a few large claims instead of one
// small claim per recorded batch (each claim has a fixed cost of a few statements), and
// deliveries that fall due elsewhere still wait at most that long (new events wake the worker
// at once anyway). After a claim that found nothing, only that interval or a wake-up claims again.
import type { Clock } from '../../domain/clock.ts';
import type { ClaimOptions, CompleteAndClaim, DeliveryQueue } from '../../domain/store.ts';
import type { Attempted } from './attempt.ts';
import type { Dispatcher, Slot } from './dispatcher.ts';
import type { GiveBack } from './lease.ts';
import type { Limits } from './limits.ts';

export const CLAIM_AT_LEAST_EVERY_MS = 20;

/** What the pump's claim found: `limit` 0 when there was no room to claim. */
export interface ClaimRound {
  claimed: number;
  limit: number;
  /** When it looked, on the worker's clock. */
  at: number;
}

/** A batch recorded, with the claim that rode with it. */
export interface RecordedBatch extends CompleteAndClaim {
  /** There was room for a claim (and the worker runs). */
  wanted: boolean;
  /** A claim rode with the batch. */
  refill: boolean;
  limit: number;
}

export interface Claims {
  /** The pump's claim: as much as there is room for. */
  claim(): Promise<ClaimRound>;
  /** Records a batch in one store call, with a claim when one is wanted. Throws when nothing was written. */
  record(batch: readonly Attempted[]): Promise<RecordedBatch>;
  /** Once the batch's attempts are settled: holds what was claimed, and has the pump go on when it should. */
  afterRecord(r: RecordedBatch): Promise<void>;
}

interface ClaimsDeps {
  queue: Pick<DeliveryQueue, 'claim' | 'completeAndClaim'>;
  owner: string;
  limits: Limits;
  clock: Clock;
  dispatcher: Pick<Dispatcher<Slot>, 'claimRoom' | 'spread' | 'take' | 'readyAt' | 'held'>;
  running(): boolean;
  giveBack: GiveBack;
  /** Has the pump look at the queue again. */
  pump(): void;
}

export function createClaims({ queue, owner, limits, clock, dispatcher, running, giveBack, pump }: ClaimsDeps): Claims {
  /** When this worker last claimed, on its clock, and whether that claim found nothing. */
  let lastClaimAt = -Infinity;
  let lastClaimEmpty = false;

  const options = (limit: number, at: number): ClaimOptions => {
    lastClaimAt = at;
    return { owner, now: at, leaseMs: limits.leaseMs, limit, perEndpointLimit: limits.prefetchPerEndpoint, exclusive: true, spread: dispatcher.spread() };
  };

  function refillWanted(batch: readonly Attempted[], at: number): boolean {
    if (at - lastClaimAt >= CLAIM_AT_LEAST_EVERY_MS) return true;
    if (lastClaimEmpty) return false; // nothing was due a moment ago: the backlog is drained
    for (const done of batch) if (dispatcher.readyAt(done.lease.dest) < limits.refillBelow) return true;
    return false;
  }

  return {
    async claim() {
      const limit = dispatcher.claimRoom();
      const at = clock.now();
      if (limit < 1) return { claimed: 0, limit: 0, at };
      const batch = await queue.claim(options(limit, at));
      lastClaimEmpty = batch.length === 0;
      dispatcher.take(batch);
      return { claimed: batch.length, limit, at };
    },
    async record(batch) {
      // Sized as the pump would size it once the batch is recorded (it sees the leases the batch frees).
      const limit = dispatcher.claimRoom(batch.length);
      const at = clock.now();
      const wanted = running() && limit >= 1;
      const refill = wanted && refillWanted(batch, at);
      const claim = refill ? options(limit, at) : null;
      const r = await queue.completeAndClaim(
        owner,
        batch.map((done) => done.completion),
        claim,
      );
      return { ...r, wanted, refill, limit };
    },
    async afterRecord({ claimed, claimError, wanted, refill, limit }) {
      if (claimed.length > 0 && !running()) {
        // Stopping began meanwhile: nothing new is sent, give the leases back at once.
        await giveBack(claimed.map((c) => c.delivery.id));
        return;
      }
      if (refill) lastClaimEmpty = claimError === null && claimed.length === 0;
      dispatcher.take(claimed);
      // As the pump would go on: the claim was full (maybe more are due), failed (the pump
      // backs off and logs), was not made, or left this worker without leases (the pump then
      // sleeps until the next due time). Otherwise the next recorded batch claims again; a
      // batch that skipped its claim (its destinations still have prefetched deliveries) leaves
      // it to a later batch, as a claim that was not full does.
      if (!wanted || claimError !== null || (refill && claimed.length === limit) || dispatcher.held() === 0) pump();
    },
  };
}
