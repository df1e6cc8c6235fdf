// The composition root: every API's handlers (server/api/) on one Hono app, the operator's
// metrics and readiness, the portal and docs, and the delivery engine's lifecycle. main.ts, the
// test harness and the conformance suite's mutants all build the server here.
import type { Hono } from 'hono';
import type { Config } from '../config.ts';
import type { Services } from '../domain/context.ts';
import type { AppEnv } from '../http/app-env.ts';
import { createApp } from '../http/app.ts';
import type { EventStreamSettings } from '../http/event-stream.ts';
import { realStreamTimers } from '../domain/orders/stream.ts';
import { untyped, type Handler } from '../http/handler-types.ts';
import type { ApiName } from '../contract/operations.ts';
import { createDeliveryEngine, type DeliveryEngine, type DeliveryEngineOptions } from '../delivery/engine.ts';
import type { SenderOptions } from '../delivery/sender.ts';
import { createThreadSender, type ThreadSender, type ThreadSenderOptions } from '../delivery/thread/thread-sender.ts';
import { createRateLimiter } from '../http/rate-limit.ts';
import { PageCache, throughPages } from '../http/page-cache.ts';
import { mountDocs } from '../http/docs.ts';
import { mountPortal } from '../portal/mount.ts';
import { managementHandlers } from '../api/management.ts';
import { ordersHandlers } from '../api/orders.ts';
import { sandboxHandlers } from '../api/sandbox.ts';
import { transactionsHandlers, userTransactionsPages } from '../api/transactions.ts';
import { requestMetrics } from '../observability/http-metrics.ts';
import { createMetrics, observeStore, type Metrics } from '../observability/metrics.ts';
import { createReadiness, type Readiness } from '../observability/readiness.ts';
import { mountOperatorRoutes } from '../observability/routes.ts';
import { attemptTracer, commitObserver, observeCommits, pruneBatchTracer, traceRequests, traceStore, type Tracing } from '../observability/tracing/index.ts';
import { createPruner, type Pruner } from '../retention/pruner.ts';
import { realTimers } from '../timers.ts';

export interface BuiltApp {
  app: Hono<AppEnv>;
  engine: DeliveryEngine;
  /** Removes expired rows in the background (started unless PRUNER=off). */
  pruner: Pruner;
  /** The operator's metrics of this app (served on /metrics when METRICS_TOKEN or METRICS_PORT is set). */
  metrics: Metrics;
  readiness: Readiness;
  /** Starts background work (the delivery engine). */
  start(): Promise<void>;
  /** Ends every open event stream (GET /v2/events/stream): called first on shutdown, so that draining requests never waits for one. */
  endStreams(): void;
  /** Stops background work, draining what is in flight (event streams end first). */
  stop(): Promise<void>;
}

/**
 * Seams for the conformance suite's mutants (conformance-tests/mutants/servers/): deliberately broken
 * variants of this server built through the real buildApp. Never set in production.
 */
export interface BuildAppOptions {
  /** Passed to the delivery engine: a custom Sender factory and/or retry schedule. */
  delivery?: Pick<DeliveryEngineOptions, 'sender' | 'schedule'>;
  /**
   * The program of the delivery engine's sending thread (main.ts: sender-thread.ts, or its
   * bundle), used unless DELIVERY_THREAD=off; without it the webhooks are sent from this thread.
   */
  senderThread?: Pick<ThreadSenderOptions, 'entry' | 'execArgv' | 'restart'>;
  /** main.ts creates these before the store is open (they answer while it starts). */
  metrics?: Metrics;
  readiness?: Readiness;
  /** Event stream timing (defaults: poll every 100 ms, heartbeat after 15 s of silence, real timers). */
  streams?: Partial<Pick<EventStreamSettings, 'pollMs' | 'heartbeatMs' | 'timers'>>;
  /** OpenTelemetry traces (main.ts: startTracing); absent, nothing is traced and nothing on any path pays for it. */
  tracing?: Tracing | null;
}

/** How often an event stream looks at the store at most, for other instances' events. */
export const STREAM_POLL_MS = 100;
/** The heartbeat of an idle event stream (documented in spec/orders.openapi.yaml). */
export const STREAM_HEARTBEAT_MS = 15_000;

export function buildApp(services: Services, config: Config, opts: BuildAppOptions = {}): BuiltApp {
  // Rendered list pages, answered only while the store gives a version (both stores; PostgreSQL
  // gives null while it cannot vouch for its staleness bound, and then every read renders).
  const pages = config.listCacheBytes > 0 ? new PageCache(config.listCacheBytes) : null;
  const handlers: Record<ApiName, Record<string, Handler>> = {
    transactions: untyped(pages ? { ...transactionsHandlers, listUserTransactions: throughPages(pages, userTransactionsPages, transactionsHandlers.listUserTransactions) } : transactionsHandlers),
    orders: untyped(ordersHandlers),
    sandbox: untyped(sandboxHandlers),
    management: untyped(managementHandlers),
  };
  const metrics = opts.metrics ?? createMetrics({ clock: services.clock });
  // Store commits are measured around the store, from outside it; recorded attempts come from the worker.
  const connections = connectionStatsOf(services.store);
  const tracer = opts.tracing?.tracer;
  if (tracer) observeCommits(services.store, commitObserver(tracer));
  services = { ...services, store: observeStore(tracer ? traceStore(services.store, tracer) : services.store, metrics) };
  const readiness = opts.readiness ?? createReadiness({ clock: services.clock });
  const shutdown = new AbortController();
  const streams: EventStreamSettings = {
    shutdown: shutdown.signal,
    pollMs: Math.min(opts.streams?.pollMs ?? STREAM_POLL_MS, STREAM_POLL_MS),
    heartbeatMs: opts.streams?.heartbeatMs ?? STREAM_HEARTBEAT_MS,
    timers: opts.streams?.timers ?? realStreamTimers,
  };
  const app = createApp(services, {
    streams,
    handlers,
    observe: tracer ? traceRequests(tracer, requestMetrics(metrics)) : requestMetrics(metrics),
    validateResponses: config.validateResponses,
    requestDeadlineMs: config.requestDeadlineMs,
    rateLimiter: createRateLimiter({ perSecond: config.rateLimitPerSecond, clock: services.clock }),
    mount: (app) => {
      mountOperatorRoutes(app, { readiness, metrics, token: config.metrics.token, openMetrics: false });
      mountDocs(app, config.docsDir);
      mountPortal(app, services, config.portal);
    },
  });
  const thread = opts.senderThread !== undefined && config.deliveryThread ? opts.senderThread : null;
  let threadSender: ThreadSender | null = null;
  // The engine's own sender options (its policy and CA), and a failed thread logged and counted.
  const sendFromThread = (program: NonNullable<typeof thread>) => (o: SenderOptions) =>
    (threadSender = createThreadSender({ ...program, sender: o, nodeEnv: config.nodeEnv, log: services.log, onThreadLost: () => metrics.senderThreadFailed() }));
  const engine = createDeliveryEngine(services, {
    retryScale: config.retryScale,
    perEndpointLimit: config.endpointConcurrency.initial,
    maxPerEndpointLimit: config.endpointConcurrency.max,
    healthyLatencyMs: config.endpointConcurrency.healthyMs,
    onAttempt: (r) => metrics.attempt(r),
    disableAfterMs: config.disableAfterMs,
    onHealth: (o) => metrics.endpointHealth(o),
    ...(tracer ? { tracer: attemptTracer(tracer) } : {}),
    ...(thread !== null ? { sender: sendFromThread(thread) } : {}),
    ...opts.delivery,
  });
  const store = services.store;
  metrics.observe({
    queue: () => store.queue.stats(services.clock.now()),
    inFlight: () => engine.worker.inFlight(),
    ...(config.deliveryWorker ? { lastClaimAt: () => engine.worker.lastClaimAt(), queueCounts: () => engine.worker.queueCounts() } : {}),
    ...(connections ? { connections } : {}),
    ...(pages ? { pages: () => pages } : {}),
  });
  const r = config.retention;
  const pruner = createPruner({ store, clock: services.clock, timers: realTimers, log: services.log, policy: r.policy, intervalMs: r.intervalMs, batch: r.batch, pauseMs: r.pauseMs, busyShare: r.busyShare, statementMs: r.statementMs, metrics: metrics.retention, ...(tracer ? { traceBatch: pruneBatchTracer(tracer) } : {}) });
  return {
    app,
    engine,
    pruner,
    metrics,
    readiness,
    async start() {
      // An API-only instance (DELIVERY_WORKER=off) leaves its queued deliveries to the others.
      if (config.deliveryWorker) {
        // What the last process held when it died goes out now (SQLite), not when its leases expire.
        const released = await store.queue.releaseOrphaned();
        if (released > 0) services.log.info({ released }, 'gave back the leases of the previous process');
        engine.start();
        // Not ready either once the sending thread is given up on (it still delivers, in-process):
        // a deployment whose thread cannot run is seen, and a rollout stops there.
        readiness.delivery(() => engine.worker.stalled() ?? threadSender?.givenUp() ?? null);
      }
      if (r.enabled) pruner.start();
      readiness.serving(store);
    },
    endStreams() {
      shutdown.abort();
    },
    async stop() {
      shutdown.abort();
      readiness.draining();
      await Promise.all([engine.stop(), pruner.stop()]);
    },
  };
}

/** The PostgreSQL store's connection counts (store/postgres/store.ts connectionStats), when the store has them. */
function connectionStatsOf(store: object): (() => { destroyed: number; refused: number; clientErrors: number; listening: boolean }) | null {
  const stats = (store as { connectionStats?: () => { destroyed: number; refused: number; clientErrors: number; listening: boolean } }).connectionStats;
  return typeof stats === 'function' ? () => stats.call(store) : null;
}
