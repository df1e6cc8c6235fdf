// The worker's limits, resolved once from its options: defaults filled in and every rule that
// keeps a lease longer than an attempt checked at creation.

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
/** An attempt still open after this long leaves the shared budget (default of `slowAfterMs`). */
export const SLOW_AFTER_MS = 100;
/** Attempts in the budget of slow attempts and suspect destinations (default of `slowConcurrency`). */
export const SLOW_CONCURRENCY = 1_024;
export const DEFAULT_BATCH_SIZE = 100;
export const DEFAULT_CONCURRENCY = 64;
export const DEFAULT_PER_ENDPOINT_LIMIT = 4;
/** Default prefetch per destination, as a multiple of perEndpointLimit. */
const PREFETCH_PER_SEND = 64;
/**
 * The completer claims with a batch only when one of the batch's destinations has fewer than
 * this share of prefetchPerEndpoint left ready (see claims.ts).
 */
const REFILL_BELOW_SHARE = 0.5;

export interface LimitOptions {
  /** Most deliveries claimed at once; default 100. */
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
}

export interface Limits {
  readonly batchSize: number;
  readonly concurrency: number;
  readonly slowConcurrency: number;
  readonly slowAfterMs: number;
  readonly perEndpointLimit: number;
  readonly prefetchPerEndpoint: number;
  readonly timeoutMs: number;
  readonly leaseMs: number;
  /** Most leases held at once (sending, ready, or waiting to be recorded). */
  readonly maxHeld: number;
  /** A destination with fewer than this many ready wants a refill (claims.ts). */
  readonly refillBelow: number;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, not ${value}`);
  return value;
}

/** The attempt deadline and the lease, checked so that a lease always outlives an attempt. */
function deadlines(opts: LimitOptions, senderTimeoutMs: number): { timeoutMs: number; leaseMs: number } {
  const timeoutMs = positiveInt('timeoutMs', opts.timeoutMs ?? senderTimeoutMs);
  if (timeoutMs < senderTimeoutMs) {
    throw new RangeError(`timeoutMs (${timeoutMs} ms) is shorter than the sender's attempt deadline (${senderTimeoutMs} ms); the lease would not cover an attempt`);
  }
  const leaseMs = positiveInt('leaseMs', opts.leaseMs ?? timeoutMs + DEFAULT_LEASE_MARGIN_MS);
  if (leaseMs <= timeoutMs + MIN_LEASE_MARGIN_MS) {
    throw new RangeError(
      `leaseMs (${leaseMs} ms) must be greater than the attempt timeout plus ${MIN_LEASE_MARGIN_MS} ms (${timeoutMs + MIN_LEASE_MARGIN_MS} ms): ` +
        'a lease that can expire while an attempt is in flight hands the delivery to a second worker and duplicates it',
    );
  }
  return { timeoutMs, leaseMs };
}

export function resolveLimits(opts: LimitOptions, senderTimeoutMs: number): Limits {
  const batchSize = positiveInt('batchSize', opts.batchSize ?? DEFAULT_BATCH_SIZE);
  const concurrency = positiveInt('concurrency', opts.concurrency ?? DEFAULT_CONCURRENCY);
  const perEndpointLimit = positiveInt('perEndpointLimit', opts.perEndpointLimit ?? DEFAULT_PER_ENDPOINT_LIMIT);
  const slowConcurrency = positiveInt('slowConcurrency', opts.slowConcurrency ?? SLOW_CONCURRENCY);
  const slowAfterMs = positiveInt('slowAfterMs', opts.slowAfterMs ?? SLOW_AFTER_MS);
  const prefetchPerEndpoint = positiveInt('prefetchPerEndpoint', opts.prefetchPerEndpoint ?? perEndpointLimit * PREFETCH_PER_SEND);
  if (prefetchPerEndpoint < perEndpointLimit) throw new RangeError(`prefetchPerEndpoint (${prefetchPerEndpoint}) must be at least perEndpointLimit (${perEndpointLimit})`);
  return {
    batchSize,
    concurrency,
    slowConcurrency,
    slowAfterMs,
    perEndpointLimit,
    prefetchPerEndpoint,
    ...deadlines(opts, senderTimeoutMs),
    maxHeld: concurrency + Math.max(batchSize, concurrency) * 2,
    refillBelow: Math.max(perEndpointLimit, Math.floor(prefetchPerEndpoint * REFILL_BELOW_SHARE)),
  };
}
