// The delivery worker: leases due deliveries from the store's queue, sends each one, and
// records the attempt with the next state (delivered, pending with a due time, or failed).
//
// Guarantees:
// - A lease always outlives an attempt: leaseMs must exceed the attempt deadline by more than
//   5 s (checked at creation), so a delivery in flight is never handed to a second worker.
// - No polling delay on the fast path: `store.onDeliveriesReady` wakes the loop at once; the
//   loop otherwise sleeps until `store.queue.nextDueAt()` (at most 30 s, as a safety net).
// - A slow endpoint blocks nobody: attempts run concurrently (at most `concurrency` in flight,
//   at most `perEndpointLimit` per destination, enforced by the claim across all workers), and
//   the loop claims again as soon as a slot frees up, not when a whole batch is done.
// - Every attempt is recorded through `complete`, guarded by the lease; a lost lease is logged
//   and nothing is written. Shutdown drains: no new claims, in-flight attempts get a grace
//   period, and whatever is still in flight after it is aborted and released unrecorded.
// - Secrets are opened only in memory to sign; neither they nor signatures are logged.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { SecretBox } from '../domain/secrets.ts';
import type { AttemptResult, ClaimedDelivery, Store } from '../store/types.ts';
import type { AttemptRecord } from '../domain/model.ts';
import { nextAttemptAt, type RetryPolicy } from './schedule.ts';
import type { SendOutcome, Sender } from './sender.ts';
import { buildDeliveryRequest, type DeliveryRequest } from './sign.ts';

/** The lease must exceed the attempt deadline by more than this. */
export const MIN_LEASE_MARGIN_MS = 5_000;
/** Default lease margin over the attempt deadline. */
export const DEFAULT_LEASE_MARGIN_MS = 20_000;
/** Longest sleep between two looks at the queue (safety net; wake-ups normally come first). */
export const MAX_IDLE_MS = 30_000;
/** Sleep when due deliveries exist but none can be claimed (destination at its limit, leased elsewhere). */
export const BLOCKED_RECHECK_MS = 1_000;
/** First back-off after a store error; doubles up to MAX_IDLE_MS. */
const ERROR_BACKOFF_MS = 1_000;

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
  /** Most attempts in flight in this worker; default 64. */
  concurrency?: number;
  /** Most attempts in flight per destination, across all workers; default 4. */
  perEndpointLimit?: number;
  /** Lease length; default timeoutMs + 20 s; must exceed timeoutMs + 5 s. */
  leaseMs?: number;
  /** Attempt deadline the lease must cover; default (and at least) the sender's. */
  timeoutMs?: number;
  timers?: Timers;
  /**
   * When the next attempt is due after a failed one (null: the cycle is over); default
   * `nextAttemptAt` of schedule.ts, the contract's schedule. A seam for the conformance suite's
   * mutants (conformance/mutants/servers/), never set in production.
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
  abort: AbortController;
  /** Set when shutdown released the lease: the attempt must not be recorded. */
  released: boolean;
  done: Promise<void>;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, not ${value}`);
  return value;
}

export function createDeliveryWorker(opts: DeliveryWorkerOptions): DeliveryWorker {
  const { store, secrets, sender, clock, retry } = opts;
  const schedule = opts.schedule ?? nextAttemptAt;
  const timers = opts.timers ?? realTimers;
  const owner = opts.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const batchSize = positiveInt('batchSize', opts.batchSize ?? 50);
  const concurrency = positiveInt('concurrency', opts.concurrency ?? 64);
  const perEndpointLimit = positiveInt('perEndpointLimit', opts.perEndpointLimit ?? 4);
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

  const inFlight = new Map<string, InFlight>();
  let started = false;
  let running = false;
  let stopping: Promise<void> | null = null;
  let unsubscribe: (() => void) | null = null;
  let sleepHandle: unknown = null;
  let pumping: Promise<void> | null = null;
  let pumpAgain = false;
  let errorBackoff = ERROR_BACKOFF_MS;

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
      // Signed with the attempt's own time: a fresh t for every attempt. The opened secret
      // lives only inside this call.
      req = buildDeliveryRequest(event, secrets.open(claimed.secretEnc), startedAt);
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
      return;
    }
    const finishedAt = clock.now();
    const record: AttemptRecord = {
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
      result = { attempt: record, state: 'delivered', nextAttemptAt: null, deliveredAt: finishedAt };
    } else {
      const next = schedule(number, finishedAt, retry);
      result = { attempt: record, state: next === null ? 'failed' : 'pending', nextAttemptAt: next, deliveredAt: null };
    }
    const ok = await store.queue.complete(owner, delivery.id, result);
    const summary = {
      ...fields,
      statusCode: sent.statusCode,
      errorClass: sent.errorClass,
      durationMs: sent.durationMs,
      state: result.state,
      nextAttemptAt: result.nextAttemptAt,
    };
    if (!ok) log.warn(summary, 'lease lost before the attempt was recorded; another worker owns the delivery now');
    else if (sent.success) log.info(summary, 'delivery delivered');
    else if (result.state === 'failed') log.warn(summary, 'delivery failed: last attempt of the cycle');
    else log.info(summary, 'attempt failed; retry scheduled');
  }

  function launch(claimed: ClaimedDelivery): InFlight {
    const entry: InFlight = { id: claimed.delivery.id, abort: new AbortController(), released: false, done: Promise.resolve() };
    inFlight.set(entry.id, entry);
    entry.done = attempt(claimed, entry)
      .catch((err: unknown) => {
        // The store refused the result (or something unexpected broke): the lease expires and
        // the delivery is attempted again; nothing is lost.
        log.error({ deliveryId: entry.id, err: err instanceof Error ? err.message : String(err) }, 'attempt could not be completed');
      })
      .finally(() => {
        inFlight.delete(entry.id);
        requestPump(); // a slot is free
      });
    return entry;
  }

  async function claimBatch(): Promise<{ claimed: number; limit: number; at: number }> {
    const free = concurrency - inFlight.size;
    const limit = Math.min(batchSize, free);
    const at = clock.now();
    if (limit < 1) return { claimed: 0, limit: 0, at };
    const batch = await store.queue.claim({ owner, now: at, leaseMs, limit, perEndpointLimit });
    for (const claimed of batch) launch(claimed);
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

  /** Claims while there are free slots and due deliveries, then sleeps until the next is due. */
  async function fill(): Promise<void> {
    for (;;) {
      if (!running) return;
      const { claimed, limit, at } = await claimBatch();
      if (limit === 0) return; // every slot busy: a finishing attempt pumps again
      if (claimed === limit) continue; // maybe more are due
      const due = await store.queue.nextDueAt();
      if (!running) return;
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

  async function drain(graceMs: number): Promise<void> {
    running = false;
    unsubscribe?.();
    unsubscribe = null;
    clearSleep();
    // A claim in progress registers its attempts before the loop ends.
    while (pumping !== null) await pumping;
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
  }

  return {
    owner,
    start() {
      if (started) return;
      started = true;
      running = true;
      unsubscribe = store.onDeliveriesReady(() => requestPump());
      log.info({ concurrency, perEndpointLimit, batchSize, leaseMs, timeoutMs }, 'delivery worker started');
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
      const batch: InFlight[] = [];
      const free = concurrency - inFlight.size;
      const limit = Math.min(batchSize, free);
      if (limit < 1) return 0;
      const claimed = await store.queue.claim({ owner, now: clock.now(), leaseMs, limit, perEndpointLimit });
      for (const c of claimed) batch.push(launch(c));
      await Promise.all(batch.map((e) => e.done));
      return claimed.length;
    },
    inFlight: () => inFlight.size,
  };
}
