// The delivery worker: leases due deliveries from the store's queue, sends each one, and
// records the attempt with the next state (delivered, pending with a due time, or failed).
//
// The pipeline (the store is never on the path of a send):
//   claim (a batch, one store transaction) → per-destination ready queues → send (at most
//   `concurrency` in flight, and per destination its adaptive limit: `perEndpointLimit` to
//   start with, up to `maxPerEndpointLimit`) → the batch completer, which
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
//   at a time and sends at most its limit to it at once; it may hold up to
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
// - A fast destination is not capped at a handful of POSTs at a time: its limit grows by one
//   per window of healthy answers (a 2xx within `healthyLatencyMs`) up to `maxPerEndpointLimit`
//   and halves on overload (no answer, 5xx, 429, a slow answer): worker/endpoint-limit.ts.
// - Every attempt is recorded guarded by its lease (owner and lease end); a lost lease is
//   logged and nothing is written. Shutdown drains: no new claims, prefetched deliveries are
//   released, in-flight attempts get a grace period, what is still in flight after it is
//   aborted and released unrecorded, and the completer is flushed.
// - Secrets are opened once per sealed value and kept only in this process's memory to sign;
//   neither they nor signatures are logged.
//
// The parts (server/delivery/worker/): limits.ts (options resolved and checked), attempt.ts
// (sign, send, classify), health.ts (last outcome per destination), endpoint-limit.ts (the
// adaptive limit per destination), pace.ts (a receiver's Retry-After and the endpoint's rate
// cap: when each destination may send next), paced.ts (the wake-up when a held-back destination
// opens, and the pause written to the store before held-back leases go), dispatcher.ts (ready
// queues, send slots, held leases, claim room and spread: synchronous), sweep.ts (open attempts
// to the slow budget), claims.ts (the pump's claims and those riding with a recorded batch),
// completer.ts (linger, batch, write, retry), pump.ts (the loop), timers.ts (every wait), and
// this module, which wires them and drains on stop.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { SecretBox } from '../domain/secrets.ts';
import type { AttemptResult, Store } from '../domain/store.ts';
import { boundedMemo } from './memo.ts';
import { nextAttemptAt, type RetryPolicy } from './schedule.ts';
import type { Sender } from './sender.ts';
import { attemptFields, attempter, logOutcome, type Attempted, type AttemptTracer, type RetrySchedule } from './worker/attempt.ts';
import { createClaims } from './worker/claims.ts';
import { createCompleter, type Completer } from './worker/completer.ts';
import { createDispatcher, type Budget, type Dispatcher, type Slot } from './worker/dispatcher.ts';
import { destinationHealth } from './worker/health.ts';
import { giveBackTo, type GiveBack, type Lease } from './worker/lease.ts';
import { createPace } from './worker/pace.ts';
import { createPacing } from './worker/paced.ts';
import { resolveLimits, type LimitOptions } from './worker/limits.ts';
import { createPump, type Pump } from './worker/pump.ts';
import { queueHealth, type QueueCounts } from './worker/queue-health.ts';
import { createSweep, type Sweep } from './worker/sweep.ts';
import { createEndpointHealth, type EndpointHealth, type EndpointHealthDeps } from './worker/endpoint-health.ts';
import { realTimers, type Timers } from '../timers.ts';

export { DEFAULT_LEASE_MARGIN_MS, MIN_LEASE_MARGIN_MS, PREFETCH_MAX_WAIT_MS, SEND_MARGIN_MS, SLOW_AFTER_MS, SLOW_CONCURRENCY } from './worker/limits.ts';
export { COMPLETE_LINGER_MIN, COMPLETE_LINGER_MS } from './worker/completer.ts';
export { BLOCKED_RECHECK_MS } from './worker/pump.ts';
export { MAX_IDLE_MS } from './worker/timers.ts';
export type { Timers } from '../timers.ts';
export type { AttemptTrace, AttemptTracer, RetrySchedule } from './worker/attempt.ts';

/** Opened secrets kept (by sealed value); the cache is emptied when it would grow past this. */
const SECRET_CACHE_SIZE = 1_024;

export interface DeliveryWorkerOptions extends LimitOptions {
  store: Store;
  secrets: SecretBox;
  sender: Sender;
  clock: Clock;
  retry: RetryPolicy;
  log: Logger;
  /** Lease owner name; default `hostname:pid:random`. */
  owner?: string;
  timers?: Timers;
  /**
   * When the next attempt is due after a failed one (null: the cycle is over); default
   * `nextAttemptAt` of schedule.ts, the contract's schedule. A seam for the conformance suite's
   * mutants (conformance-tests/mutants/servers/), never set in production.
   */
  schedule?: RetrySchedule;
  /** Told of every attempt once it is recorded under its lease (the operator's metrics subscribe here). */
  onAttempt?: (result: AttemptResult) => void;
  /** Traces each attempt (tracing on); absent, nothing is traced. */
  tracer?: AttemptTracer;
  /** Endpoint health (issue 69): told of every attempt to an endpoint; absent, no health is kept. */
  health?: Omit<EndpointHealthDeps, 'timers' | 'clock' | 'log' | 'holdMs'>;
}

export interface DeliveryWorker {
  readonly owner: string;
  /** Starts the loop (idempotent). */
  start(): void;
  /**
   * Drains: stops claiming, waits for in-flight attempts up to `graceMs` (default the attempt
   * deadline + 2 s), then aborts and gives back what is left without recording an attempt.
   */
  stop(opts?: { graceMs?: number }): Promise<void>;
  /** Looks at the queue now (also what `onDeliveriesReady` does). */
  wake(): void;
  /** Attempts in flight right now. */
  inFlight(): number;
  /** Why this worker cannot claim or record deliveries right now, or null while it can (readiness). */
  stalled(): string | null;
  /** When a claim last succeeded (metrics, watchdog); null: never. */
  lastClaimAt(): number | null;
  /** Claims and recorded batches so far, and the deliveries they held (metrics). */
  queueCounts(): QueueCounts;
}

/** An attempt in flight: its send slot, and what shutdown needs to abandon it. */
interface Sending extends Slot {
  readonly abort: AbortController;
  /** Set when shutdown gave the lease back: the attempt must not be recorded. */
  abandoned: boolean;
  done: Promise<void>;
}

interface Parts {
  dispatcher: Dispatcher<Sending>;
  pump: Pump;
  sweep: Sweep;
  completer: Completer;
  endpoints: EndpointHealth | null;
  giveBack: GiveBack;
  timers: Timers;
  log: Logger;
  unsubscribe(): void;
}

export function createDeliveryWorker(opts: DeliveryWorkerOptions): DeliveryWorker {
  const { store, clock } = opts;
  const limits = resolveLimits(opts, opts.sender.timeoutMs);
  const timers = opts.timers ?? realTimers;
  const owner = opts.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const log = opts.log.child({ component: 'webhook-delivery', owner });
  // Every queue call observed: whether this worker can claim and record right now.
  const queueState = queueHealth(clock);
  const queue = queueState.observe(store.queue);
  const giveBack = giveBackTo(queue, owner, log);
  const health = destinationHealth();
  const endpoints: EndpointHealth | null = opts.health ? createEndpointHealth({ ...opts.health, timers, clock, log, holdMs: limits.leaseMs }) : null;
  const openSecret = boundedMemo(SECRET_CACHE_SIZE, (sealed) => opts.secrets.open(sealed));
  const pace = createPace();
  const pacing = createPacing({ pace, timers, clock, log, queue, giveBack, dispatch: () => dispatcher.dispatch() });
  const attempt = attempter({ sender: opts.sender, clock, retry: opts.retry, schedule: opts.schedule ?? nextAttemptAt, log, openSecret, ...(opts.tracer ? { tracer: opts.tracer } : {}) });

  /** Sends one attempt; once answered, frees its slot and hands it to the completer. */
  async function send(slot: Sending): Promise<void> {
    if (endpoints?.gone(slot.lease.dest)) {
      // Its endpoint answered 410 and is being disabled: not sent; the lease runs out, by when the delivery is disabled.
      dispatcher.letGo(slot.lease);
      dispatcher.freeSlot(slot);
      return;
    }
    const done = await attempt(slot.lease, slot.abort.signal);
    endpoints?.answered(slot.lease, done.completion.result);
    if (slot.abandoned) {
      log.info(attemptFields(slot.lease), 'attempt abandoned at shutdown; the delivery was released for another worker');
      dispatcher.letGo(slot.lease);
      dispatcher.freeSlot(slot);
      return;
    }
    health.remember(slot.lease.dest, done.completion.result.attempt.success);
    // A receiver's Retry-After holds its destination back here before the slot is reused...
    if (done.pauseUntil !== undefined) pace.pause(slot.lease.dest, done.pauseUntil);
    // The slot is free now (its answer adapts the destination's limit); the completer records the attempt with others.
    dispatcher.freeSlot(slot, done.completion.result.attempt);
    // ...and in the store before this lease is let go, so no other instance claims it meanwhile.
    if (done.pauseUntil !== undefined) await pacing.pauseInStore(slot.lease.dest, done.pauseUntil);
    completer.record(done);
  }

  const dispatcher: Dispatcher<Sending> = createDispatcher<Sending>({
    limits,
    health,
    clock,
    pace,
    hooks: {
      start(lease: Lease, budget: Budget, seq: number) {
        const slot: Sending = { lease, budget, seq, abort: new AbortController(), abandoned: false, done: Promise.resolve() };
        slot.done = send(slot).catch((err: unknown) => {
          // Something unexpected broke: the lease expires and the delivery is attempted again.
          log.error({ deliveryId: lease.delivery.id, err: err instanceof Error ? err.message : String(err) }, 'attempt could not be completed');
          if (dispatcher.freeSlot(slot)) dispatcher.letGo(lease);
        });
        return slot;
      },
      expired(leases) {
        if (log.isLevelEnabled('info')) log.info({ released: leases.length }, 'prefetched deliveries waited too long for their destination; leases given back');
        void pacing.giveBack(leases);
      },
      sharedFull: () => sweep.arm(),
      wakeAt: pacing.wakeAt,
    },
  });
  const claims = createClaims({ queue, owner, limits, clock, dispatcher, running: () => pump.running(), giveBack, pump: () => pump.request() });
  const pump = createPump({ timers, clock, log, claim: claims.claim, holding: () => dispatcher.held() > 0, nextDueAt: () => queue.nextDueAt() });
  const sweep = createSweep({ timers, slowAfterMs: limits.slowAfterMs, dispatcher, moved: () => pump.request() });
  const completer = createCompleter({
    timers,
    clock,
    log,
    lingering: () => pump.running() && dispatcher.sharedInFlight() > 0,
    write: (batch: readonly Attempted[]) => claims.record(batch),
    written: claims.afterRecord,
    settle(done, ok, message) {
      dispatcher.letGo(done.lease);
      logOutcome(log, done, ok, message);
      if (ok) {
        opts.onAttempt?.(done.completion.result);
        endpoints?.observe(done.lease, done.completion.result);
      }
    },
  });

  let started = false;
  let stopping: Promise<void> | null = null;
  let unsubscribe = (): void => undefined;
  return {
    owner,
    start() {
      if (started) return;
      started = true;
      unsubscribe = store.onDeliveriesReady(() => pump.request());
      const { concurrency, slowConcurrency, slowAfterMs, perEndpointLimit, maxPerEndpointLimit, healthyLatencyMs, prefetchPerEndpoint, batchSize, leaseMs, timeoutMs } = limits;
      log.info({ concurrency, slowConcurrency, slowAfterMs, perEndpointLimit, maxPerEndpointLimit, healthyLatencyMs, prefetchPerEndpoint, batchSize, leaseMs, timeoutMs }, 'delivery worker started');
      pump.start();
    },
    stop(stopOpts = {}) {
      started = true; // a stopped worker does not start again
      pacing.stop();
      const parts: Parts = { dispatcher, pump, sweep, completer, endpoints, giveBack, timers, log, unsubscribe };
      stopping ??= drain(parts, stopOpts.graceMs ?? limits.timeoutMs + 2_000).then(() => log.info('delivery worker stopped'));
      return stopping;
    },
    wake: () => pump.request(),
    inFlight: () => dispatcher.sending().size,
    stalled: () => (pump.running() ? queueState.stalled() : null),
    lastClaimAt: () => queueState.lastClaimAt(),
    queueCounts: () => queueState.counts(),
  };
}

/** Resolves after graceMs, or at once when `all` settles first. */
async function within(timers: Timers, graceMs: number, all: Promise<unknown>): Promise<void> {
  let timer: unknown = null;
  const graceOver = new Promise<void>((resolve) => {
    timer = timers.setTimeout(resolve, graceMs);
  });
  await Promise.race([all, graceOver]);
  timers.clearTimeout(timer);
}

/**
 * Stops claiming and sending, gives the prefetched leases back, waits up to graceMs for the
 * attempts in flight, aborts and gives back what is still open (unrecorded), and records the rest.
 */
async function drain(p: Parts, graceMs: number): Promise<void> {
  p.dispatcher.stop();
  p.unsubscribe();
  p.sweep.cancel();
  // A claim in progress registers its deliveries before the loop ends.
  await p.pump.stop();
  await p.giveBack(p.dispatcher.drainReady().map((l) => l.delivery.id));
  const sending = p.dispatcher.sending();
  if (sending.size > 0) {
    p.log.info({ inFlight: sending.size, graceMs }, 'draining in-flight deliveries');
    await within(p.timers, graceMs, Promise.allSettled([...sending].map((s) => s.done)));
  }
  const left = [...sending];
  if (left.length > 0) {
    for (const slot of left) {
      slot.abandoned = true;
      slot.abort.abort(new Error('the delivery worker is stopping'));
    }
    if (await p.giveBack(left.map((s) => s.lease.delivery.id))) p.log.warn({ released: left.length }, 'released deliveries still in flight after the grace period');
    await Promise.allSettled(left.map((s) => s.done));
  }
  // Recording is bounded too: with a store that does not answer, what is left unrecorded is
  // dropped; its leases expire and the deliveries are sent again (at-least-once).
  await within(p.timers, RECORD_GRACE_MS, p.completer.idle());
  const dropped = p.completer.abandon();
  if (p.endpoints) await within(p.timers, RECORD_GRACE_MS, p.endpoints.idle());
  if (dropped > 0) p.log.warn({ dropped }, 'attempts left unrecorded at shutdown (the store did not answer); their deliveries will be sent again');
}

/** How long a stopping worker keeps trying to record finished attempts. */
export const RECORD_GRACE_MS = 5_000;
