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
/** Where a destination's limit of attempts in flight starts (endpoint-limit.ts). */
export const DEFAULT_PER_ENDPOINT_LIMIT = 4;
/** The most a destination's limit grows to (default of `maxPerEndpointLimit`, raised to perEndpointLimit). */
export const DEFAULT_MAX_PER_ENDPOINT_LIMIT = 32;
/** A 2xx answered within this is healthy and grows the limit; a slower answer halves it. */
export const DEFAULT_HEALTHY_LATENCY_MS = 500;
/** Default prefetch per destination, as a multiple of perEndpointLimit... */
const PREFETCH_PER_SEND = 64;
/** ...and at least this multiple of maxPerEndpointLimit, so the grown limit has leases to send. */
const PREFETCH_PER_MAX_SEND = 8;
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
  /**
   * Attempts in flight per destination, across all workers, to start with; default 4. The limit
   * then adapts (endpoint-limit.ts): one more per window of healthy answers, up to
   * `maxPerEndpointLimit`, halved (not below 1) on overload.
   */
  perEndpointLimit?: number;
  /**
   * The most a destination's limit grows to; default 32 (or perEndpointLimit, if larger).
   * Equal to perEndpointLimit, the limit never grows past its start (it still halves on overload).
   */
  maxPerEndpointLimit?: number;
  /** A 2xx answered within this grows the limit, any slower answer halves it; default 500 ms. */
  healthyLatencyMs?: number;
  /**
   * Most leases this worker holds per destination (in flight, waiting to be sent, or waiting
   * to be recorded); default 64 × perEndpointLimit and at least 8 × maxPerEndpointLimit (256
   * either way at the defaults: following the max alone, 64 × 32, would not be held anyway, as
   * maxHeld is 264, and would raise refillBelow so that every recorded batch claimed again);
   * at least maxPerEndpointLimit. Only this worker sends to a destination while it holds
   * leases on it. By Little's law a destination drains at most this many leases per
   * claim-to-record cycle: a lease is held from the claim until its attempt is recorded
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
  /** Where a destination's adaptive limit starts. */
  readonly perEndpointLimit: number;
  readonly maxPerEndpointLimit: number;
  readonly healthyLatencyMs: number;
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
  const maxPerEndpointLimit = positiveInt('maxPerEndpointLimit', opts.maxPerEndpointLimit ?? Math.max(DEFAULT_MAX_PER_ENDPOINT_LIMIT, perEndpointLimit));
  if (maxPerEndpointLimit < perEndpointLimit) throw new RangeError(`maxPerEndpointLimit (${maxPerEndpointLimit}) must be at least perEndpointLimit (${perEndpointLimit})`);
  const healthyLatencyMs = positiveInt('healthyLatencyMs', opts.healthyLatencyMs ?? DEFAULT_HEALTHY_LATENCY_MS);
  const prefetchPerEndpoint = positiveInt('prefetchPerEndpoint', opts.prefetchPerEndpoint ?? Math.max(perEndpointLimit * PREFETCH_PER_SEND, maxPerEndpointLimit * PREFETCH_PER_MAX_SEND));
  // Fewer leases than the max would cap the adaptive limit below it.
  if (prefetchPerEndpoint < maxPerEndpointLimit) throw new RangeError(`prefetchPerEndpoint (${prefetchPerEndpoint}) must be at least maxPerEndpointLimit (${maxPerEndpointLimit})`);
  return {
    batchSize,
    concurrency,
    slowConcurrency,
    slowAfterMs,
    perEndpointLimit,
    maxPerEndpointLimit,
    healthyLatencyMs,
    prefetchPerEndpoint,
    ...deadlines(opts, senderTimeoutMs),
    maxHeld: concurrency + Math.max(batchSize, concurrency) * 2,
    refillBelow: Math.max(maxPerEndpointLimit, Math.floor(prefetchPerEndpoint * REFILL_BELOW_SHARE)),
  };
}
