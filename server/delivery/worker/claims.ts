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
//
// Claims coalesce under load: after a claim that was not full, the next one (the pump's on a
// wake-up, or one riding with a batch) waits CLAIM_WAIT_PER_DELIVERY_MS for each delivery that
// claim found, up to CLAIM_WAIT_MAX_MS, counted from its answer. Each claim costs PostgreSQL
// about 640 µs plus 23 µs a delivery (scripts/bench/queue-cost.ts): claiming on every commit of
// orders took a handful at a time. A lone webhook waits at most a fraction of a millisecond (its
// last claim found few), a steady stream lets the batch grow until the wait reaches the cap, and
// a full claim (a backlog in the store) claims again at once.
import type { Clock } from '../../domain/clock.ts';
import type { ClaimOptions, CompleteAndClaim, DeliveryQueue } from '../../domain/store.ts';
import type { Attempted } from './attempt.ts';
import type { Dispatcher, Slot } from './dispatcher.ts';
import type { GiveBack } from './lease.ts';
import type { Limits } from './limits.ts';

export const CLAIM_AT_LEAST_EVERY_MS = 20;
/** The wait before the next claim, per delivery the last one found (when it was not full)... */
export const CLAIM_WAIT_PER_DELIVERY_MS = 0.4;
/** ...and at most this: the most a coalescing wait delays a delivery that is due. */
export const CLAIM_WAIT_MAX_MS = 8;

/** How long after a claim's answer the next claim waits: it found `claimed` of `limit`. */
export function claimWaitMs(claimed: number, limit: number): number {
  return claimed >= limit ? 0 : Math.min(CLAIM_WAIT_MAX_MS, claimed * CLAIM_WAIT_PER_DELIVERY_MS);
}

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
  /** How long the next claim should wait to coalesce with what falls due meanwhile (0: claim now). */
  waitMs(): number;
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
  /** When the next claim may be made, on the worker's clock (claimWaitMs after the last answer). */
  let nextClaimAt = -Infinity;
  const answered = (claimed: number, limit: number): void => {
    nextClaimAt = clock.now() + claimWaitMs(claimed, limit);
  };
  const waitMs = (): number => Math.max(0, nextClaimAt - clock.now());

  const options = (limit: number, at: number): ClaimOptions => {
    lastClaimAt = at;
    return { owner, now: at, leaseMs: limits.leaseMs, limit, perEndpointLimit: limits.prefetchPerEndpoint, exclusive: true, spread: dispatcher.spread() };
  };

  function refillWanted(batch: readonly Attempted[], at: number): boolean {
    if (waitMs() > 0) return false; // coalescing: the pump's timer or a later batch claims
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
      answered(batch.length, limit);
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
      if (refill && claimError === null) answered(claimed.length, limit);
      dispatcher.take(claimed);
      // As the pump would go on: the claim was full (maybe more are due), failed (the pump
      // backs off and logs), was not made, or left this worker without leases (the pump then
      // sleeps until the next due time). Otherwise the next recorded batch claims again; a
      // batch that skipped its claim (its destinations still have prefetched deliveries) leaves
      // it to a later batch, as a claim that was not full does.
      if (!wanted || claimError !== null || (refill && claimed.length === limit) || dispatcher.held() === 0) pump();
    },
    waitMs,
  };
}
