// The operator's metrics (Prometheus text format, prom-client). One registry per app, not
// prom-client's global one, so several servers in one process (tests) keep theirs apart.
// Labels never carry a tenant, an id, a URL or a secret: only operation ids of the contract,
// methods, status codes, outcomes and error classes (bounded sets).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Clock } from '../domain/clock.ts';
import type { AttemptResult, CallOptions, OrderCreated, OrderCreation, PayoutCreated, PayoutCreation, Store, Tx } from '../domain/store.ts';
import { StoreDecorator } from '../domain/store-decorator.ts';
import { KeptHistogram } from './kept-histogram.ts';
import { retentionMetrics, type RetentionMetrics } from './retention-metrics.ts';

/** Seconds; requests, store commits and pruning batches are mostly fast, attempts may take up to the 10 s deadline. */
const FAST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 7.5, 10, 15];

/** What the metrics read at scrape time. */
export interface Sources {
  queue?: () => Promise<QueueSnapshot>;
  inFlight?: () => number;
  /** When this instance's delivery worker last claimed successfully (null: never or no worker). */
  lastClaimAt?: () => number | null;
  /** The delivery worker's claims and recorded batches, and the deliveries they held. */
  queueCounts?: () => { claims: number; claimed: number; batches: number; recorded: number };
  /** The store's connections (PostgreSQL): destroyed for a missed deadline, calls refused, listener up. */
  connections?: () => { destroyed: number; refused: number; clientErrors: number; listening: boolean };
  /** The cache of rendered list pages (http/page-cache.ts), when on. */
  pages?: () => { stats: { hits: number; misses: number }; size(): { entries: number; bytes: number } };
}

export interface QueueSnapshot {
  due: number;
  leased: number;
  waiting: number;
  oldestDueAt: number | null;
}

export interface Metrics {
  readonly registry: Registry;
  /** One answered HTTP request (operation: the contract's operationId, or a fixed name). */
  request(operation: string, method: string, status: number, seconds: number): void;
  /** One recorded delivery attempt (the delivery worker's `onAttempt` event, with the AttemptResult it stored). */
  attempt(result: AttemptResult): void;
  /** The delivery engine's sending thread failed (delivery/thread/thread-sender.ts onThreadLost). */
  senderThreadFailed(): void;
  /** What one endpoint-health write did (issue 69): operational events raised, endpoints disabled. */
  endpointHealth(o: { disabled: ReadonlyArray<{ reason: string }>; raised: readonly string[] }): void;
  /** The pruner's batches (retention-metrics.ts). */
  readonly retention: RetentionMetrics;
  /** One store transaction: committed or rolled back, and how long it took. */
  transaction(outcome: 'commit' | 'rollback', seconds: number): void;
  /** Sources read at scrape time: queue depth, in-flight attempts. */
  observe(sources: Sources): void;
  /** The text exposition of every metric. */
  render(): Promise<string>;
  readonly contentType: string;
}

export function createMetrics(opts: { clock: Clock; defaultMetrics?: boolean }): Metrics {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let sources: Sources = {};

  // The request metrics: one kept child per label set (kept-histogram.ts); the counter is its count.
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by contract operation, method and status code.',
    labelNames: ['operation', 'method', 'status'] as const,
    registers,
    collect() {
      this.reset();
      for (const child of requestSeconds.children) this.inc(child.labels, child.count);
    },
  });
  const requestSeconds = new KeptHistogram(
    'http_request_duration_seconds',
    'Time from receiving a request to its answer, by contract operation, method and status code.',
    FAST_BUCKETS,
    registry,
  );
  const deliveries = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Delivery attempts recorded, by outcome (delivered, retry: will be tried again, failed: cycle over, disabled) and error class (none on a response).',
    labelNames: ['outcome', 'error_class'] as const,
    registers,
  });
  const attemptSeconds = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Duration of one delivery attempt, connect included, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: ATTEMPT_BUCKETS,
    registers,
  });
  const threadFailures = new Counter({
    name: 'webhook_sender_thread_failures_total',
    help: "Failures of the delivery engine's sending thread (it crashed or could not start); its attempts were sent from the API thread.",
    registers,
  });
  const operationalEvents = new Counter({
    name: 'webhook_operational_events_total',
    help: 'Operational events raised about webhook endpoints (webhook_endpoint.failing, .disabled, .recovered), by type.',
    labelNames: ['type'] as const,
    registers,
  });
  const endpointsDisabled = new Counter({
    name: 'webhook_endpoints_disabled_total',
    help: 'Webhook endpoints the service disabled on its own, by reason (gone: a 410 answer; failing: every attempt failed for WEBHOOK_DISABLE_AFTER).',
    labelNames: ['reason'] as const,
    registers,
  });
  const commitSeconds = new Histogram({
    name: 'store_transaction_duration_seconds',
    help: 'Duration of one store transaction (domain writes and reads) until commit or rollback.',
    labelNames: ['outcome'] as const,
    buckets: FAST_BUCKETS,
    registers,
  });
  const queueDepth = new Gauge({
    name: 'webhook_queue_deliveries',
    help: 'Pending deliveries in the shared queue: due (ready to send), leased (being sent by an instance), waiting (for a retry later).',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const snapshot = await readQueue();
      if (!snapshot) return;
      this.set({ state: 'due' }, snapshot.due);
      this.set({ state: 'leased' }, snapshot.leased);
      this.set({ state: 'waiting' }, snapshot.waiting);
    },
  });
  const oldestDue = new Gauge({
    name: 'webhook_queue_oldest_due_age_seconds',
    help: 'How long the oldest due, unleased delivery has been waiting to be sent (0 when none is due).',
    registers,
    async collect() {
      const snapshot = await readQueue();
      if (!snapshot) return;
      this.set(snapshot.oldestDueAt === null ? 0 : Math.max(0, (opts.clock.now() - snapshot.oldestDueAt) / 1000));
    },
  });
  const queueUp = new Gauge({
    name: 'webhook_queue_stats_up',
    help: '1 when the last scrape could read the queue from the store, 0 when the store did not answer.',
    registers,
    async collect() {
      this.set((await readQueue()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'webhook_attempts_in_flight',
    help: 'Delivery attempts in flight in this instance.',
    registers,
    collect() {
      this.set(sources.inFlight?.() ?? 0);
    },
  });
  new Gauge({
    name: 'webhook_last_claim_age_seconds',
    help: "Seconds since this instance's delivery worker last claimed successfully (-1: not yet, or no worker). Growing while deliveries are due means delivery is stuck (/readyz says why).",
    registers,
    collect() {
      const at = sources.lastClaimAt?.() ?? null;
      this.set(at === null ? -1 : Math.max(0, (opts.clock.now() - at) / 1000));
    },
  });
  /** A counter kept elsewhere (the delivery worker, the store): each scrape copies its total. */
  const copiedCount = (name: string, help: string, read: () => number | undefined): void =>
    void new Counter({
      name,
      help,
      registers,
      collect() {
        const total = read();
        if (total === undefined) return;
        this.reset();
        this.inc(total);
      },
    });
  type QueueCounts = NonNullable<ReturnType<NonNullable<Sources['queueCounts']>>>;
  const workerCount = (name: string, help: string, pick: (c: QueueCounts) => number): void => copiedCount(name, help, () => {
    const c = sources.queueCounts?.();
    return c && pick(c);
  });
  // Deliveries per claim and per recorded batch: how well the queue batches (each has a fixed cost).
  workerCount('webhook_queue_claims_total', "Claims of the delivery worker's queue that succeeded (one statement each, alone or riding with a recorded batch).", (c) => c.claims);
  workerCount('webhook_queue_claimed_total', 'Deliveries those claims leased.', (c) => c.claimed);
  workerCount('webhook_queue_record_batches_total', 'Batches of attempts the delivery worker recorded (one store call each).', (c) => c.batches);
  workerCount('webhook_queue_recorded_total', 'Attempts those batches recorded.', (c) => c.recorded);
  const storeCount = (name: string, help: string, pick: (c: { destroyed: number; refused: number; clientErrors: number }) => number): void => copiedCount(name, help, () => {
    const c = sources.connections?.();
    return c && pick(c);
  });
  storeCount('store_connections_destroyed_total', 'Database connections destroyed because a query or a transaction missed its deadline (never returned to the pool).', (c) => c.destroyed);
  storeCount('store_calls_refused_total', 'Store calls refused at once (503) because too many already waited for the database, or that waited too long for it (admission control).', (c) => c.refused);
  storeCount('store_connection_errors_total', "Errors a database connection's own handler took in (a connection lost or destroyed; logged at debug). Its pool or caller handles each too.", (c) => c.clientErrors);
  new Gauge({
    name: 'store_listener_connected',
    help: '1 while the PostgreSQL notification listener is connected; 0 while it reconnects (the workers poll every second meanwhile).',
    registers,
    collect() {
      const c = sources.connections?.();
      if (c) this.set(c.listening ? 1 : 0);
    },
  });
  new Counter({
    name: 'http_list_cache_answers_total',
    help: 'List reads (GET /transactions/users) answered from the cache of rendered pages (hit) or from the store (miss).',
    labelNames: ['result'] as const,
    registers,
    collect() {
      const pages = sources.pages?.();
      if (!pages) return;
      // The cache counts; the scrape copies its totals.
      this.reset();
      this.inc({ result: 'hit' }, pages.stats.hits);
      this.inc({ result: 'miss' }, pages.stats.misses);
    },
  });
  new Gauge({
    name: 'http_list_cache_bytes',
    help: 'Estimated bytes held by the cache of rendered list pages (bounded by LIST_CACHE_MB).',
    registers,
    collect() {
      this.set(sources.pages?.().size().bytes ?? 0);
    },
  });

  // One store query per scrape, shared by the three gauges that need it.
  let scrape: Promise<QueueSnapshot | null> | null = null;
  function readQueue(): Promise<QueueSnapshot | null> {
    if (!sources.queue) return Promise.resolve(null);
    scrape ??= sources.queue().then(
      (s) => s,
      () => null,
    );
    return scrape;
  }
  void queueDepth;
  void oldestDue;
  void queueUp;

  // Each metric's children, made once per label set and kept (nothing resets these metrics).
  const requestChild = kept3((operation: string, method: string, status: number) => requestSeconds.child({ operation, method, status: String(status) }));
  const deliveryChild = kept2((outcome: string, errorClass: string) => deliveries.labels({ outcome, error_class: errorClass }));
  const attemptChild = kept2((outcome: string) => attemptSeconds.labels({ outcome }));
  const commitChild = kept2((outcome: string) => commitSeconds.labels({ outcome }));

  return {
    registry,
    contentType: registry.contentType,
    retention: retentionMetrics(registers, opts.clock, FAST_BUCKETS),
    request(operation, method, status, seconds) {
      requestChild(operation, method, status).observe(seconds);
    },
    attempt(result) {
      const outcome = result.state === 'pending' ? 'retry' : result.state;
      deliveryChild(outcome, result.attempt.errorClass ?? 'none').inc();
      attemptChild(outcome).observe(result.attempt.durationMs / 1000);
    },
    senderThreadFailed() {
      threadFailures.inc();
    },
    endpointHealth(o) {
      for (const type of o.raised) operationalEvents.inc({ type });
      for (const d of o.disabled) endpointsDisabled.inc({ reason: d.reason });
    },
    transaction(outcome, seconds) {
      commitChild(outcome).observe(seconds);
    },
    observe(s) {
      sources = { ...sources, ...s };
    },
    async render() {
      scrape = null;
      try {
        return await registry.metrics();
      } finally {
        scrape = null;
      }
    },
  };
}

/**
 * The store, observed: every transaction's duration and outcome. A wrapper from outside, so the
 * stores themselves know nothing of metrics. Recorded attempts are the delivery worker's event
 * (its `onAttempt`), not the store's: the queue passes through untouched, and so do reads (not
 * commits) and the pruner's batches (it records its own figures: retention/pruner.ts).
 */
export function observeStore(store: Store, metrics: Metrics): Store {
  return new ObservedStore(store, metrics);
}

class ObservedStore extends StoreDecorator {
  constructor(
    base: Store,
    private readonly metrics: Metrics,
  ) {
    super(base);
  }
  override transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: CallOptions): Promise<T> {
    return timedCommit(this.metrics, () => this.base.transaction(fn, opts));
  }
  override createOrder(c: OrderCreation, opts?: CallOptions): Promise<OrderCreated> {
    return timedCommit(this.metrics, () => this.base.createOrder(c, opts));
  }
  override createPayout(c: PayoutCreation, opts?: CallOptions): Promise<PayoutCreated> {
    return timedCommit(this.metrics, () => this.base.createPayout(c, opts));
  }
}

/**
 * `make`'s value for each key, made once and kept: no label object per observation. The keys
 * are bounded sets (operations, methods, statuses, outcomes), so the maps stay small.
 */
function kept2<A, B, V>(make: (a: A, b: B) => V): (a: A, b?: B) => V {
  const byA = new Map<A, Map<B | undefined, V>>();
  return (a, b) => {
    let byB = byA.get(a);
    if (!byB) byA.set(a, (byB = new Map()));
    let value = byB.get(b);
    if (value === undefined) byB.set(b, (value = make(a, b as B)));
    return value;
  };
}

function kept3<A, B, C, V>(make: (a: A, b: B, c: C) => V): (a: A, b: B, c: C) => V {
  const byA = new Map<A, (b: B, c: C) => V>();
  return (a, b, c) => {
    let rest = byA.get(a);
    if (!rest) byA.set(a, (rest = kept2((b: B, c: C) => make(a, b, c))));
    return rest(b, c);
  };
}

/** Runs one write of the store and records its duration and outcome. */
async function timedCommit<T>(metrics: Metrics, write: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const value = await write();
    metrics.transaction('commit', (performance.now() - started) / 1000);
    return value;
  } catch (err) {
    metrics.transaction('rollback', (performance.now() - started) / 1000);
    throw err;
  }
}
