// The delivery worker: leases due deliveries from the store's queue, sends each one, and
// records the attempt with the next state (delivered, pending with a due time, or failed).
//
// The pipeline (the store is never on the path of a send):
//   claim (a batch, one store transaction) → per-destination ready queues → send (at most
//   `concurrency` in flight, `perEndpointLimit` per destination) → the batch completer, which
//   records every attempt finished meanwhile in one store call (`completeAndClaim`; one
//   commit, one fsync or WAL flush for all) and claims into the leases it freed in the same call.
//
// Guarantees:
// - A lease always outlives an attempt: leaseMs must exceed the attempt deadline by more than
//   5 s (checked at creation), and a prefetched delivery is only sent while at least the
//   attempt deadline plus SEND_MARGIN_MS of its lease remain and it waited at most
//   PREFETCH_MAX_WAIT_MS (otherwise its lease is given back and it is claimed again afresh),
//   so a delivery in flight is never handed to a second worker, and a delivery disabled by an
//   endpoint edit is not sent from a stale prefetch.
// - Per-destination limit across workers: claims are exclusive per destination (a destination
//   on which another owner holds a live lease is skipped), so one worker serves a destination
//   at a time and sends at most `perEndpointLimit` to it at once; it may hold up to
//   `prefetchPerEndpoint` leases on it so that the next send starts as soon as one ends.
//   A claim takes on new destinations only for the send slots the held ones cannot fill
//   (`spread`), so that several workers split a backlog spread over many destinations.
// - At-least-once: an attempt is recorded durably (completeAndClaim resolves after the commit)
//   before it is logged as done; a crash loses at most the attempts in flight or waiting for
//   the completer, whose leases expire and which are then sent again.
// - No polling delay on the fast path: `store.onDeliveriesReady` wakes the loop at once; the
//   loop otherwise sleeps until `store.queue.nextDueAt()` (at most 30 s, as a safety net).
// - A slow endpoint blocks nobody: its sends wait in its own queue, other destinations go on.
// - Hanging destinations do not starve healthy ones. A waiting socket is cheap; a slot of the
//   shared budget (`concurrency`) is not. So an attempt still open after `slowAfterMs` moves
//   out of the shared budget into a second, larger one (`slowConcurrency`), and a suspect
//   destination (its last attempt here failed, or the delivery is a retry and the destination
//   has not succeeded here since) is sent to one attempt at a time from that second budget
//   only. Neither counts against the leases the claims are sized by (up to `slowConcurrency`
//   of them), so healthy deliveries keep being claimed behind a mass of hanging ones, and
//   destinations known to answer are dispatched first. Per-destination limits are unchanged:
//   a moved attempt still counts at its destination.
// - Every attempt is recorded guarded by its lease (owner and lease end); a lost lease is
//   logged and nothing is written. Shutdown drains: no new claims, prefetched deliveries are
//   released, in-flight attempts get a grace period, what is still in flight after it is
//   aborted and released unrecorded, and the completer is flushed.
// - Secrets are opened once per sealed value and kept only in this process's memory to sign;
//   neither they nor signatures are logged.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { SecretBox } from '../domain/secrets.ts';
import type { AttemptResult, ClaimedDelivery, Completion, Store } from '../store/types.ts';
import type { AttemptRecord } from '../domain/model.ts';
import { boundedMemo } from './memo.ts';
import { nextAttemptAt, type RetryPolicy } from './schedule.ts';
import type { SendOutcome, Sender } from './sender.ts';
import { buildDeliveryRequest, type DeliveryRequest } from './sign.ts';

/** The lease must exceed the attempt deadline by more than this. */
export const MIN_LEASE_MARGIN_MS = 5_000;
/** Default lease margin over the attempt deadline. */
export const DEFAULT_LEASE_MARGIN_MS = 20_000;
/** A prefetched delivery is sent only while its lease has the attempt deadline plus this left. */
export const SEND_MARGIN_MS = 2_000;
/**
 * A prefetched delivery that waited this long for its destination (a slow endpoint) is given
 * back instead of sent, and claimed again afresh: so what it sends is never older than this
 * (an endpoint edited or disabled meanwhile has disabled it in the store, and it is not claimed again).
 */
export const PREFETCH_MAX_WAIT_MS = 2_000;
/** Longest sleep between two looks at the queue (safety net; wake-ups normally come first). */
export const MAX_IDLE_MS = 30_000;
/** Sleep when due deliveries exist but none can be claimed (destination at its limit, leased elsewhere). */
export const BLOCKED_RECHECK_MS = 1_000;
/** First back-off after a store error; doubles up to MAX_IDLE_MS. */
const ERROR_BACKOFF_MS = 1_000;
/** Most attempts recorded in one completeMany. */
const COMPLETE_BATCH = 256;
/**
 * While other attempts are still in flight, the completer waits up to COMPLETE_LINGER_MS for
 * COMPLETE_LINGER_MIN finished attempts before it records them. Each record is a commit with a
 * fixed cost (on SQLite about 100 µs of the event loop: BEGIN, COMMIT writing the touched
 * pages, the log sync's dispatch) that a fast disk's quick sync would otherwise pay every 6 to 8
 * attempts. Only the recording waits: the send slot is free as soon as the answer arrives, the
 * lease covers the wait many times over, and an idle worker (nothing else in flight) or a
 * stopping one records at once.
 */
export const COMPLETE_LINGER_MIN = 64;
export const COMPLETE_LINGER_MS = 2;
/**
 * The completer claims with a batch only when one of the batch's destinations has fewer than
 * this many prefetched deliveries left (as a share of prefetchPerEndpoint), or when its last
 * claim is CLAIM_AT_LEAST_EVERY_MS old: a destination draining a backlog then refills its
 * prefetch in a few large claims instead of one small claim per recorded batch (each claim has
 * a fixed cost of a few statements), and deliveries that fall due elsewhere still wait at most
 * that long (new events wake the worker at once anyway). After a claim that found nothing, only
 * that interval or a wake-up claims again.
 */
const REFILL_BELOW_SHARE = 0.5;
const CLAIM_AT_LEAST_EVERY_MS = 20;
/** Opened secrets kept (by sealed value); the cache is emptied when it would grow past this. */
const SECRET_CACHE_SIZE = 1_024;
/** An attempt still open after this long leaves the shared budget (default of `slowAfterMs`). */
export const SLOW_AFTER_MS = 100;
/** Attempts in the budget of slow attempts and suspect destinations (default of `slowConcurrency`). */
export const SLOW_CONCURRENCY = 1_024;
/** Destinations whose last outcome is remembered; the memory is emptied when it would grow past this. */
const OUTCOME_MEMORY_SIZE = 10_000;

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  // Unref'd: the worker's own sleep never keeps a process alive (the HTTP server does).
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface DeliveryWorkerOptions {
  store: Store;
  secrets: SecretBox;
  sender: Sender;
  clock: Clock;
  retry: RetryPolicy;
  log: Logger;
  /** Lease owner name; default `hostname:pid:random`. */
  owner?: string;
  /** Most deliveries claimed at once; default 50. */
  batchSize?: number;
  /** Most attempts in flight in this worker's shared budget; default 64. */
  concurrency?: number;
  /**
   * Most attempts in the second budget: attempts open longer than `slowAfterMs` and attempts
   * to suspect destinations (one each); default 1 024. Each is a socket and a lease, no more.
   */
  slowConcurrency?: number;
  /** When an open attempt moves from the shared budget to the second one; default 100 ms. */
  slowAfterMs?: number;
  /** Most attempts in flight per destination, across all workers; default 4. */
  perEndpointLimit?: number;
  /**
   * Most leases this worker holds per destination (in flight, waiting to be sent, or waiting
   * to be recorded); default 64 × perEndpointLimit. Only this worker sends to a destination
   * while it holds leases on it. By Little's law a destination drains at most this many leases
   * per claim-to-record cycle: a lease is held from the claim until its attempt is recorded
   * (a commit with its log flush), so a small prefetch, not the sends, bounded one busy
   * destination (16 × 4: about 1 700 deliveries/s on PostgreSQL here; 64 × 4: about 2 500).
   * Prefetched deliveries that wait longer than PREFETCH_MAX_WAIT_MS are given back.
   */
  prefetchPerEndpoint?: number;
  /** Lease length; default timeoutMs + 20 s; must exceed timeoutMs + 5 s. */
  leaseMs?: number;
  /** Attempt deadline the lease must cover; default (and at least) the sender's. */
  timeoutMs?: number;
  timers?: Timers;
  /**
   * When the next attempt is due after a failed one (null: the cycle is over); default
   * `nextAttemptAt` of schedule.ts, the contract's schedule. A seam for the conformance suite's
   * mutants (conformance-tests/mutants/servers/), never set in production.
   */
  schedule?: RetrySchedule;
}

/** The shape of `nextAttemptAt` (schedule.ts): attempt number (1-based), now, policy → due time or null. */
export type RetrySchedule = typeof nextAttemptAt;

export interface DeliveryWorker {
  readonly owner: string;
  /** Starts the loop (idempotent). */
  start(): void;
  /**
   * Drains: stops claiming, waits for in-flight attempts up to `graceMs` (default the attempt
   * deadline + 2 s), then aborts and releases what is left without recording an attempt.
   */
  stop(opts?: { graceMs?: number }): Promise<void>;
  /** Looks at the queue now (also what `onDeliveriesReady` does). */
  wake(): void;
  /** Claims one batch and processes it fully; returns how many deliveries were claimed. For tests. */
  runOnce(): Promise<number>;
  /** Attempts in flight right now. */
  inFlight(): number;
}

interface InFlight {
  id: string;
  /** Which budget the attempt counts against. */
  pool: 'shared' | 'slow';
  /** Launch order: the sweep moves attempts launched before it was armed. */
  seq: number;
  abort: AbortController;
  /** Set when shutdown released the lease: the attempt must not be recorded. */
  released: boolean;
  done: Promise<void>;
}

interface Pending {
  completion: Completion;
  /** Its destination (destinationOf). */
  dest: string;
  /** What the log line of the outcome says. */
  summary: Record<string, unknown>;
  resolve(): void;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, not ${value}`);
  return value;
}

/** Where a delivery goes: its endpoint, or its url (payout callbacks). */
const destinationOf = (c: ClaimedDelivery): string => (c.delivery.endpointId !== null ? `e:${c.delivery.endpointId}` : `u:${c.delivery.url}`);

export function createDeliveryWorker(opts: DeliveryWorkerOptions): DeliveryWorker {
  const { store, secrets, sender, clock, retry } = opts;
  const schedule = opts.schedule ?? nextAttemptAt;
  const timers = opts.timers ?? realTimers;
  const owner = opts.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const batchSize = positiveInt('batchSize', opts.batchSize ?? 100);
  const concurrency = positiveInt('concurrency', opts.concurrency ?? 64);
  const perEndpointLimit = positiveInt('perEndpointLimit', opts.perEndpointLimit ?? 4);
  const slowConcurrency = positiveInt('slowConcurrency', opts.slowConcurrency ?? SLOW_CONCURRENCY);
  const slowAfterMs = positiveInt('slowAfterMs', opts.slowAfterMs ?? SLOW_AFTER_MS);
  const prefetchPerEndpoint = positiveInt('prefetchPerEndpoint', opts.prefetchPerEndpoint ?? perEndpointLimit * 64);
  if (prefetchPerEndpoint < perEndpointLimit) throw new RangeError(`prefetchPerEndpoint (${prefetchPerEndpoint}) must be at least perEndpointLimit (${perEndpointLimit})`);
  /** Most leases held at once by this worker (sending, ready, or waiting to be recorded). */
  const maxHeld = concurrency + Math.max(batchSize, concurrency) * 2;
  const senderTimeout = sender.timeoutMs;
  const timeoutMs = positiveInt('timeoutMs', opts.timeoutMs ?? senderTimeout);
  if (timeoutMs < senderTimeout) {
    throw new RangeError(`timeoutMs (${timeoutMs} ms) is shorter than the sender's attempt deadline (${senderTimeout} ms); the lease would not cover an attempt`);
  }
  const leaseMs = positiveInt('leaseMs', opts.leaseMs ?? timeoutMs + DEFAULT_LEASE_MARGIN_MS);
  if (leaseMs <= timeoutMs + MIN_LEASE_MARGIN_MS) {
    throw new RangeError(
      `leaseMs (${leaseMs} ms) must be greater than the attempt timeout plus ${MIN_LEASE_MARGIN_MS} ms (${timeoutMs + MIN_LEASE_MARGIN_MS} ms): ` +
        'a lease that can expire while an attempt is in flight hands the delivery to a second worker and duplicates it',
    );
  }
  const log = opts.log.child({ component: 'webhook-delivery', owner });
  const logInfo = (): boolean => log.isLevelEnabled('info');

  /** Attempts being sent. */
  const inFlight = new Map<string, InFlight>();
  /** Claimed deliveries waiting for a free slot of their destination, per destination. */
  const ready = new Map<string, ClaimedDelivery[]>();
  /** Sends in flight per destination. */
  const sending = new Map<string, number>();
  /** Attempts in flight per budget. */
  let sharedInFlight = 0;
  let slowInFlight = 0;
  let launchSeq = 0;
  let sweepHandle: unknown = null;
  /** Last outcome per destination here: true answered 2xx, false failed. */
  const outcomes = new Map<string, boolean>();
  /** Leases held: ready + in flight + waiting for the completer. */
  let held = 0;
  let started = false;
  let running = false;
  let stopping: Promise<void> | null = null;
  let unsubscribe: (() => void) | null = null;
  let sleepHandle: unknown = null;
  let pumping: Promise<void> | null = null;
  let pumpAgain = false;
  let errorBackoff = ERROR_BACKOFF_MS;
  const openSecret = boundedMemo(SECRET_CACHE_SIZE, (sealed) => secrets.open(sealed));


  // ---- the batch completer ------------------------------------------------------------------
  // Attempts finished while a completeMany is running wait for the next one: under load every
  // commit records many attempts, and an idle worker records one at once (no timer to wait for).

  let completions: Pending[] = [];
  let flushing: Promise<void> | null = null;
  let flushScheduled = false;
  let completerBackoff = ERROR_BACKOFF_MS;
  let completerTimer: unknown = null;
  let lingerTimer: unknown = null;
  /** When this worker last claimed, on its clock, and whether that claim found nothing. */
  let lastClaimAt = -Infinity;
  let lastClaimEmpty = false;
  const refillBelow = Math.max(perEndpointLimit, Math.floor(prefetchPerEndpoint * REFILL_BELOW_SHARE));

  /** Whether a claim should ride with this batch (see REFILL_BELOW_SHARE). */
  function refillWanted(batch: readonly Pending[], at: number): boolean {
    if (at - lastClaimAt >= CLAIM_AT_LEAST_EVERY_MS) return true;
    if (lastClaimEmpty) return false; // nothing was due a moment ago: the backlog is drained
    for (const p of batch) if ((ready.get(p.dest)?.length ?? 0) < refillBelow) return true;
    return false;
  }

  function record(p: Pending): Promise<void> {
    completions.push(p);
    scheduleFlush();
    return new Promise<void>((resolve) => {
      p.resolve = resolve;
    });
  }

  function scheduleFlush(): void {
    if (flushing !== null || flushScheduled || completerTimer !== null || completions.length === 0) return;
    if (running && sharedInFlight > 0 && completions.length < COMPLETE_LINGER_MIN) {
      // More attempts finish soon: let them share this commit (COMPLETE_LINGER_MS).
      lingerTimer ??= timers.setTimeout(() => {
        lingerTimer = null;
        flushNow();
      }, COMPLETE_LINGER_MS);
      return;
    }
    flushNow();
  }

  function flushNow(): void {
    if (lingerTimer !== null) {
      timers.clearTimeout(lingerTimer);
      lingerTimer = null;
    }
    if (flushing !== null || flushScheduled || completerTimer !== null || completions.length === 0) return;
    flushScheduled = true;
    // One turn of the event loop: attempts finishing in the same turn join this batch.
    setImmediate(() => {
      flushScheduled = false;
      flushing = flush().finally(() => {
        flushing = null;
        scheduleFlush();
      });
    });
  }

  async function flush(): Promise<void> {
    const batch = completions.slice(0, COMPLETE_BATCH);
    completions = completions.slice(batch.length);
    // The next claim rides with the batch (one store call, and it sees the leases the batch
    // frees): sized as fill() would size it once the batch is recorded.
    const limit = Math.min(batchSize, maxHeld - (countedHeld() - batch.length));
    const at = clock.now();
    const wanted = running && limit >= 1;
    const refill = wanted && refillWanted(batch, at);
    if (refill) lastClaimAt = at;
    const claim = refill ? { owner, now: at, leaseMs, limit, perEndpointLimit: prefetchPerEndpoint, exclusive: true, spread: spread() } : null;
    let applied: boolean[];
    let claimed: ClaimedDelivery[] = [];
    let claimError: Error | null = null;
    try {
      ({ applied, claimed, claimError } = await store.queue.completeAndClaim(
        owner,
        batch.map((p) => p.completion),
        claim,
      ));
      completerBackoff = ERROR_BACKOFF_MS;
    } catch (err) {
      // Nothing of the batch was written. Keep what can still be recorded under its lease and
      // try again after a pause; an attempt whose lease has ended is dropped (the delivery is
      // sent again by whoever claims it next: at-least-once).
      const now = clock.now();
      const keep = batch.filter((p) => p.completion.leaseExpiresAt > now);
      for (const p of batch) if (!keep.includes(p)) settle(p, false, 'lease expired before the attempt could be recorded; the delivery will be sent again');
      log.error({ err: err instanceof Error ? err.message : String(err), attempts: batch.length, retryInMs: completerBackoff }, 'attempts could not be recorded; retrying');
      completions = [...keep, ...completions];
      completerTimer = timers.setTimeout(() => {
        completerTimer = null;
        scheduleFlush();
      }, completerBackoff);
      completerBackoff = Math.min(completerBackoff * 2, MAX_IDLE_MS);
      return;
    }
    batch.forEach((p, i) => settle(p, applied[i] === true));
    if (claimed.length > 0 && !running) {
      // Stopping began meanwhile: nothing new is sent, give the leases back at once.
      await store.queue.release(owner, claimed.map((c) => c.delivery.id)).catch((err: unknown) => {
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'could not release leases; they expire on their own');
      });
      return;
    }
    if (refill) lastClaimEmpty = claimError === null && claimed.length === 0;
    take(claimed);
    // As fill() would go on: the claim was full (maybe more are due), failed (the pump backs
    // off and logs), was not made, or left this worker without leases (the pump then sleeps
    // until the next due time). Otherwise the next recorded batch claims again.
    // A batch that skipped its claim (its destinations still have prefetched deliveries) leaves
    // it to a later batch, as a claim that was not full does.
    if (!wanted || claimError !== null || (refill && claimed.length === limit) || held === 0) requestPump();
  }

  function settle(p: Pending, ok: boolean, lostMessage = 'lease lost before the attempt was recorded; another worker owns the delivery now'): void {
    held -= 1;
    const { summary } = p;
    const state = p.completion.result.state;
    if (!ok) log.warn(summary, lostMessage);
    else if (p.completion.result.attempt.success) {
      if (logInfo()) log.info(summary, 'delivery delivered');
    } else if (state === 'failed') log.warn(summary, 'delivery failed: last attempt of the cycle');
    else if (logInfo()) log.info(summary, 'attempt failed; retry scheduled');
    p.resolve();
  }

  async function completerIdle(): Promise<void> {
    while (completions.length > 0 || flushing !== null || flushScheduled) {
      // Waiting for everything: record what lingers now.
      if (lingerTimer !== null) flushNow();
      if (completerTimer !== null) {
        // Stopping: try the failed batch again now rather than after the back-off.
        timers.clearTimeout(completerTimer);
        completerTimer = null;
        scheduleFlush();
      }
      if (flushing !== null) await flushing;
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  // ---- one attempt -------------------------------------------------------------------------

  async function attempt(claimed: ClaimedDelivery, entry: InFlight): Promise<void> {
    const { delivery, event } = claimed;
    const number = delivery.attemptCount + 1;
    const fields = { deliveryId: delivery.id, eventId: event.id, kind: delivery.kind, endpointId: delivery.endpointId, cycle: delivery.cycle, attempt: number };
    const startedAt = clock.now();
    let signatureTimestamp = Math.floor(startedAt / 1000);
    let sent: SendOutcome;
    let req: DeliveryRequest | null = null;
    try {
      // Signed with the attempt's own time: a fresh t for every attempt.
      req = buildDeliveryRequest(event, openSecret(claimed.secretEnc), startedAt);
    } catch (err) {
      // Nothing can be signed (wrong SECRETS_KEY, damaged secret): record a failed attempt
      // without sending, so the schedule moves on and ends instead of retrying forever on
      // lease expiry. The error text names no secret (SecretBox and signature errors don't).
      log.error({ ...fields, err: err instanceof Error ? err.message : String(err) }, 'cannot sign the delivery; attempt recorded as failed without sending');
    }
    if (req === null) {
      sent = { outcome: 'error', statusCode: null, errorClass: 'network_error', responseBody: null, success: false, durationMs: 0 };
    } else {
      signatureTimestamp = req.timestamp;
      sent = await sender.send({ url: delivery.url, body: req.body, headers: req.headers, signal: entry.abort.signal });
    }
    if (entry.released) {
      log.info(fields, 'attempt abandoned at shutdown; the delivery was released for another worker');
      held -= 1;
      release(entry, destinationOf(claimed));
      return;
    }
    const finishedAt = clock.now();
    remember(destinationOf(claimed), sent.success);
    const attemptRecord: AttemptRecord = {
      deliveryId: delivery.id,
      cycle: delivery.cycle,
      number,
      startedAt,
      durationMs: sent.durationMs,
      signatureTimestamp,
      outcome: sent.outcome,
      statusCode: sent.statusCode,
      errorClass: sent.errorClass,
      responseBody: sent.responseBody,
      success: sent.success,
    };
    let result: AttemptResult;
    if (sent.success) {
      result = { attempt: attemptRecord, state: 'delivered', nextAttemptAt: null, deliveredAt: finishedAt };
    } else {
      const next = schedule(number, finishedAt, retry);
      result = { attempt: attemptRecord, state: next === null ? 'failed' : 'pending', nextAttemptAt: next, deliveredAt: null };
    }
    const summary = {
      ...fields,
      statusCode: sent.statusCode,
      errorClass: sent.errorClass,
      durationMs: sent.durationMs,
      state: result.state,
      nextAttemptAt: result.nextAttemptAt,
    };
    // The slot is free now; the completer records the attempt with others.
    const dest = destinationOf(claimed);
    release(entry, dest);
    await record({ completion: { deliveryId: delivery.id, leaseExpiresAt: delivery.leaseExpiresAt ?? 0, result }, dest, summary, resolve: () => undefined });
  }

  function remember(dest: string, success: boolean): void {
    if (outcomes.size >= OUTCOME_MEMORY_SIZE && !outcomes.has(dest)) outcomes.clear();
    outcomes.set(dest, success);
  }

  /** A destination that failed here last, or (never answered here since) whose delivery is a retry. */
  function suspect(dest: string, next: ClaimedDelivery): boolean {
    const last = outcomes.get(dest);
    return last === undefined ? next.delivery.attemptCount > 0 : !last;
  }

  /** Frees the send slot of a finished attempt and starts what waits for it. */
  function release(entry: InFlight, dest: string): void {
    if (!inFlight.has(entry.id)) return;
    inFlight.delete(entry.id);
    if (entry.pool === 'shared') sharedInFlight -= 1;
    else slowInFlight -= 1;
    const n = (sending.get(dest) ?? 1) - 1;
    if (n <= 0) sending.delete(dest);
    else sending.set(dest, n);
    dispatch();
  }

  function launch(claimed: ClaimedDelivery, dest: string, pool: InFlight['pool']): InFlight {
    const entry: InFlight = { id: claimed.delivery.id, pool, seq: ++launchSeq, abort: new AbortController(), released: false, done: Promise.resolve() };
    inFlight.set(entry.id, entry);
    if (pool === 'shared') sharedInFlight += 1;
    else slowInFlight += 1;
    sending.set(dest, (sending.get(dest) ?? 0) + 1);
    entry.done = attempt(claimed, entry).catch((err: unknown) => {
      // Something unexpected broke: the lease expires and the delivery is attempted again;
      // nothing is lost.
      log.error({ deliveryId: entry.id, err: err instanceof Error ? err.message : String(err) }, 'attempt could not be completed');
      if (inFlight.has(entry.id)) held -= 1;
      release(entry, dest);
    });
    return entry;
  }

  /** Deliveries whose lease is too short to be sent now; given back in one call. */
  let expiring: string[] = [];

  /**
   * Starts every ready delivery that has a free slot (in its budget and at its destination):
   * destinations that answered here last first, then the others.
   */
  function dispatch(): void {
    if (stopping !== null) return; // stopping: nothing new is sent
    let waitingForShared = false;
    for (const knownGood of [true, false]) {
      for (const [dest, queue] of ready) {
        if (knownGood && outcomes.get(dest) !== true) continue;
        while (queue.length > 0) {
          const isSuspect = suspect(dest, queue[0]!);
          const pool = isSuspect ? 'slow' : 'shared';
          const room = isSuspect ? slowInFlight < slowConcurrency && !sending.has(dest) : sharedInFlight < concurrency && (sending.get(dest) ?? 0) < perEndpointLimit;
          if (!room) {
            if (!isSuspect && sharedInFlight >= concurrency) waitingForShared = true;
            break;
          }
          const claimed = queue.shift()!;
          const left = (claimed.delivery.leaseExpiresAt ?? 0) - clock.now();
          if (left < timeoutMs + SEND_MARGIN_MS || leaseMs - left > PREFETCH_MAX_WAIT_MS) {
            expiring.push(claimed.delivery.id);
            held -= 1;
            continue;
          }
          launch(claimed, dest, pool);
        }
        if (queue.length === 0) ready.delete(dest);
      }
    }
    // Also with nothing waiting here: a full shared budget holds claims back from spreading to
    // the destinations due in the store (spread), until hanging attempts move out of it.
    if (waitingForShared || sharedInFlight >= concurrency) armSweep();
    if (expiring.length > 0) {
      const ids = expiring;
      expiring = [];
      if (logInfo()) log.info({ released: ids.length }, 'prefetched deliveries waited too long for their destination; leases given back');
      store.queue.release(owner, ids).catch((err: unknown) => {
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'could not release leases; they expire on their own');
      });
    }
  }

  /**
   * Once `slowAfterMs` has passed, moves the shared-budget attempts launched before now that
   * are still open to the slow budget (as far as it has room), and dispatches what waited.
   */
  function armSweep(): void {
    if (sweepHandle !== null || slowInFlight >= slowConcurrency) return;
    const upTo = launchSeq;
    sweepHandle = timers.setTimeout(() => {
      sweepHandle = null;
      if (stopping !== null) return;
      for (const entry of inFlight.values()) {
        if (slowInFlight >= slowConcurrency) break;
        if (entry.pool !== 'shared' || entry.seq > upTo) continue;
        entry.pool = 'slow';
        sharedInFlight -= 1;
        slowInFlight += 1;
      }
      dispatch();
      requestPump(); // the moved attempts' leases no longer count against claims
    }, slowAfterMs);
  }

  /**
   * Leases that count against the claims: all held, less those of the slow budget (its
   * attempts in flight and the deliveries of suspect destinations waiting for it), up to
   * `slowConcurrency` of them.
   */
  function countedHeld(): number {
    let slow = slowInFlight;
    for (const [dest, queue] of ready) if (queue.length > 0 && suspect(dest, queue[0]!)) slow += queue.length;
    return held - Math.min(slow, slowConcurrency);
  }

  /**
   * How far a claim may spread to destinations this worker holds nothing of (ClaimOptions.spread):
   * the slots of the shared budget that what it holds cannot fill. A destination that is not
   * suspect fills up to perEndpointLimit less what it sends already from its ready queue; a
   * suspect one sends from the slow budget only, so it neither counts nor holds a spread back.
   * Destinations beyond those stay free for other instances: claims are exclusive, and a
   * worker that took every destination of a backlog left a second instance nothing to send.
   */
  function spread(): { slots: number; perDestination: number } {
    let covered = sharedInFlight;
    for (const [dest, queue] of ready) {
      if (queue.length === 0 || suspect(dest, queue[0]!)) continue;
      covered += Math.min(queue.length, Math.max(0, perEndpointLimit - (sending.get(dest) ?? 0)));
    }
    return { slots: Math.max(0, concurrency - covered), perDestination: perEndpointLimit };
  }

  function take(batch: ClaimedDelivery[]): void {
    held += batch.length;
    for (const claimed of batch) {
      const dest = destinationOf(claimed);
      let queue = ready.get(dest);
      if (queue === undefined) ready.set(dest, (queue = []));
      queue.push(claimed);
    }
    dispatch();
  }

  async function claimBatch(): Promise<{ claimed: number; limit: number; at: number }> {
    const limit = Math.min(batchSize, maxHeld - countedHeld());
    const at = clock.now();
    if (limit < 1) return { claimed: 0, limit: 0, at };
    lastClaimAt = at;
    const batch = await store.queue.claim({ owner, now: at, leaseMs, limit, perEndpointLimit: prefetchPerEndpoint, exclusive: true, spread: spread() });
    lastClaimEmpty = batch.length === 0;
    take(batch);
    return { claimed: batch.length, limit, at };
  }

  // ---- the loop ------------------------------------------------------------------------------

  function clearSleep(): void {
    if (sleepHandle !== null) {
      timers.clearTimeout(sleepHandle);
      sleepHandle = null;
    }
  }

  function sleep(ms: number): void {
    clearSleep();
    if (!running) return;
    sleepHandle = timers.setTimeout(() => {
      sleepHandle = null;
      requestPump();
    }, Math.max(0, Math.min(ms, MAX_IDLE_MS)));
  }

  function requestPump(): void {
    if (!running) return;
    if (pumping !== null) {
      pumpAgain = true;
      return;
    }
    pumping = pump().finally(() => {
      pumping = null;
    });
  }

  async function pump(): Promise<void> {
    do {
      pumpAgain = false;
      clearSleep();
      try {
        await fill();
        errorBackoff = ERROR_BACKOFF_MS;
      } catch (err) {
        log.error({ err: err instanceof Error ? err.message : String(err), retryInMs: errorBackoff }, 'delivery queue unavailable');
        sleep(errorBackoff);
        errorBackoff = Math.min(errorBackoff * 2, MAX_IDLE_MS);
        return;
      }
    } while (pumpAgain && running);
  }

  /**
   * Claims while there is room and due deliveries. While this worker holds leases, the
   * completer pumps again after each batch it records (which frees leases), so nothing else
   * needs to be watched; once it holds none, sleeps until the next delivery is due.
   */
  async function fill(): Promise<void> {
    for (;;) {
      if (!running) return;
      const { claimed, limit, at } = await claimBatch();
      if (limit === 0) return; // full: the completer pumps again
      if (claimed === limit) continue; // maybe more are due
      if (held > 0) return; // the completer pumps again when leases free up
      const due = await store.queue.nextDueAt();
      if (!running) return;
      if (held > 0) return;
      const now = clock.now();
      if (due === null) return sleep(MAX_IDLE_MS);
      if (due > now) return sleep(due - now);
      // Due now but not claimed: if it became due after the claim looked, look again at once;
      // otherwise its destination is at its limit or another worker's lease on it is live.
      if (due > at) continue;
      return sleep(BLOCKED_RECHECK_MS);
    }
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  async function releaseReady(): Promise<void> {
    const ids = [...ready.values()].flatMap((q) => q.map((c) => c.delivery.id));
    ready.clear();
    if (ids.length === 0) return;
    held -= ids.length;
    try {
      await store.queue.release(owner, ids);
    } catch (err) {
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'could not release leases; they expire on their own');
    }
  }

  async function drain(graceMs: number): Promise<void> {
    running = false;
    unsubscribe?.();
    unsubscribe = null;
    clearSleep();
    if (sweepHandle !== null) {
      timers.clearTimeout(sweepHandle);
      sweepHandle = null;
    }
    // A claim in progress registers its deliveries before the loop ends.
    while (pumping !== null) await pumping;
    // Prefetched deliveries that were not sent go back at once.
    await releaseReady();
    if (inFlight.size > 0) {
      log.info({ inFlight: inFlight.size, graceMs }, 'draining in-flight deliveries');
      let graceTimer: unknown = null;
      const graceOver = new Promise<void>((resolve) => {
        graceTimer = timers.setTimeout(resolve, graceMs);
      });
      await Promise.race([Promise.allSettled([...inFlight.values()].map((e) => e.done)), graceOver]);
      timers.clearTimeout(graceTimer);
    }
    const left = [...inFlight.values()];
    if (left.length > 0) {
      for (const entry of left) {
        entry.released = true;
        entry.abort.abort(new Error('the delivery worker is stopping'));
      }
      try {
        await store.queue.release(owner, left.map((e) => e.id));
        log.warn({ released: left.length }, 'released deliveries still in flight after the grace period');
      } catch (err) {
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'could not release leases; they expire on their own');
      }
      await Promise.allSettled(left.map((e) => e.done));
    }
    await completerIdle();
  }

  return {
    owner,
    start() {
      if (started) return;
      started = true;
      running = true;
      unsubscribe = store.onDeliveriesReady(() => requestPump());
      log.info({ concurrency, slowConcurrency, slowAfterMs, perEndpointLimit, prefetchPerEndpoint, batchSize, leaseMs, timeoutMs }, 'delivery worker started');
      requestPump();
    },
    stop(stopOpts = {}) {
      if (stopping === null) {
        stopping = drain(stopOpts.graceMs ?? timeoutMs + 2_000).then(() => log.info('delivery worker stopped'));
      }
      started = true; // a stopped worker does not start again
      return stopping;
    },
    wake() {
      requestPump();
    },
    async runOnce() {
      const limit = Math.min(batchSize, maxHeld - countedHeld());
      if (limit < 1) return 0;
      const claimed = await store.queue.claim({ owner, now: clock.now(), leaseMs, limit, perEndpointLimit: prefetchPerEndpoint, exclusive: true });
      take(claimed);
      // Everything claimed is sent (each destination's queue in turn) and recorded.
      while (ready.size > 0 || inFlight.size > 0) {
        await Promise.allSettled([...inFlight.values()].map((e) => e.done));
        dispatch();
      }
      await completerIdle();
      return claimed.length;
    },
    inFlight: () => inFlight.size,
  };
}
