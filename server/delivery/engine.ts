// The delivery engine of one server process: one sender (one shared keep-alive Agent behind the
// destination policy) and one worker on the store's queue. server/app/build-app.ts starts it with
// the app and stops it (draining in-flight attempts) on shutdown.
import type { Services } from '../domain/context.ts';
import { DEFAULT_DISABLE_AFTER_MS, recordEndpointAttempts, type HealthOutcome } from '../domain/endpoints/health.ts';
import { ATTEMPT_TIMEOUT_MS } from './schedule.ts';
import { createSender, type Sender, type SenderOptions } from './sender.ts';
import { realTimers } from '../timers.ts';
import { createWatchdog } from './watchdog.ts';
import { createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions, type RetrySchedule, type Timers } from './worker.ts';

export interface DeliveryEngineOptions {
  /** WEBHOOK_RETRY_SCALE: factor applied to the retry schedule (1 = the real schedule). */
  retryScale: number;
  /** Jitter source; default Math.random. */
  random?: () => number;
  /** Attempt deadline, connect included; default 10 s. */
  timeoutMs?: number;
  /** Default timeoutMs + 20 s; must exceed timeoutMs + 5 s. */
  leaseMs?: number;
  concurrency?: number;
  slowConcurrency?: number;
  slowAfterMs?: number;
  /** Where each destination's adaptive limit of attempts in flight starts (WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpointLimit?: number;
  /** The most it grows to (WEBHOOK_ENDPOINT_MAX_CONCURRENCY). */
  maxPerEndpointLimit?: number;
  /** A 2xx within this grows it, a slower answer halves it (WEBHOOK_ENDPOINT_HEALTHY_MS). */
  healthyLatencyMs?: number;
  batchSize?: number;
  owner?: string;
  /** Test CA for https receivers in tests. */
  tls?: { ca?: string | Buffer };
  timers?: Timers;
  /**
   * Builds the sender instead of `createSender` (given the options the engine would use).
   * A seam for the conformance suite's mutants (conformance-tests/mutants/servers/); never set in
   * production.
   */
  sender?: (opts: SenderOptions) => Sender;
  /** Replaces the retry schedule (`nextAttemptAt`); same purpose and rule as `sender`. */
  schedule?: RetrySchedule;
  /** Told of every recorded attempt (the worker's event; the operator's metrics count them). */
  onAttempt?: DeliveryWorkerOptions['onAttempt'];
  /** Traces each attempt (tracing on: observability/tracing/delivery.ts). */
  tracer?: DeliveryWorkerOptions['tracer'];
  /** WEBHOOK_DISABLE_AFTER: how long every attempt must fail before the endpoint is disabled (default 5 days). */
  disableAfterMs?: number;
  /** Told of what each endpoint-health write did (the operator's metrics count the operational events). */
  onHealth?: (o: HealthOutcome) => void;
  /** How often the watchdog looks (watchdog.ts; default WATCHDOG_MS, 0: no watchdog). */
  watchdogMs?: number;
  watchdogTimers?: Timers;
}

export interface DeliveryEngine {
  readonly worker: DeliveryWorker;
  readonly sender: Sender;
  start(): void;
  /** Drains the worker (graceMs, default the attempt deadline + 2 s), then closes the sender. */
  stop(opts?: { graceMs?: number }): Promise<void>;
  /** Looks at the queue now. */
  wake(): void;
}

export function createDeliveryEngine(services: Services, opts: DeliveryEngineOptions): DeliveryEngine {
  if (!Number.isFinite(opts.retryScale) || opts.retryScale <= 0) {
    throw new RangeError(`retryScale must be a positive number, not ${opts.retryScale}`);
  }
  const timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const sender = (opts.sender ?? createSender)({ policy: services.destinations, timeoutMs, ...(opts.tls ? { tls: opts.tls } : {}) });
  let worker: DeliveryWorker;
  try {
    worker = createDeliveryWorker({
      store: services.store,
      secrets: services.secrets,
      sender,
      clock: services.clock,
      retry: { scale: opts.retryScale, ...(opts.random ? { random: opts.random } : {}) },
      log: services.log,
      timeoutMs,
      ...(opts.leaseMs !== undefined ? { leaseMs: opts.leaseMs } : {}),
      ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
      ...(opts.slowConcurrency !== undefined ? { slowConcurrency: opts.slowConcurrency } : {}),
      ...(opts.slowAfterMs !== undefined ? { slowAfterMs: opts.slowAfterMs } : {}),
      ...(opts.perEndpointLimit !== undefined ? { perEndpointLimit: opts.perEndpointLimit } : {}),
      ...(opts.maxPerEndpointLimit !== undefined ? { maxPerEndpointLimit: opts.maxPerEndpointLimit } : {}),
      ...(opts.healthyLatencyMs !== undefined ? { healthyLatencyMs: opts.healthyLatencyMs } : {}),
      ...(opts.batchSize !== undefined ? { batchSize: opts.batchSize } : {}),
      ...(opts.tracer ? { tracer: opts.tracer } : {}),
      ...(opts.owner !== undefined ? { owner: opts.owner } : {}),
      ...(opts.timers !== undefined ? { timers: opts.timers } : {}),
      ...(opts.schedule !== undefined ? { schedule: opts.schedule } : {}),
      ...(opts.onAttempt !== undefined ? { onAttempt: opts.onAttempt } : {}),
      health: {
        record: (attempts) => recordEndpointAttempts({ store: services.store, clock: services.clock, policy: { disableAfterMs: opts.disableAfterMs ?? DEFAULT_DISABLE_AFTER_MS } }, attempts),
        ...(opts.onHealth ? { onOutcome: opts.onHealth } : {}),
      },
    });
  } catch (err) {
    void sender.close();
    throw err;
  }
  let stopping: Promise<void> | null = null;
  // Its own real timers unless told (watchdogMs 0: none): the worker's fake timers in tests stay the worker's.
  const watchdog =
    opts.watchdogMs === 0
      ? null
      : createWatchdog({ worker, queue: services.store.queue, clock: services.clock, timers: opts.watchdogTimers ?? realTimers, log: services.log, ...(opts.watchdogMs !== undefined ? { everyMs: opts.watchdogMs } : {}) });
  return {
    worker,
    sender,
    start: () => {
      worker.start();
      watchdog?.start();
    },
    wake: () => worker.wake(),
    stop(stopOpts) {
      watchdog?.stop();
      stopping ??= (async () => {
        try {
          await worker.stop(stopOpts);
        } finally {
          await sender.close();
        }
      })();
      return stopping;
    },
  };
}
