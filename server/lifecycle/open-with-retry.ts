// Start-up with the store unreachable (PostgreSQL restarting, the network not up yet): wait
// and retry with a growing delay and a clear log line, /readyz saying why meanwhile, rather
// than exit and leave the restart loop to the orchestrator. Anything that is not "the store
// is unavailable" (a bad password, a missing database, a newer schema) fails at once.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Readiness } from '../observability/readiness.ts';
import { openServices, type ServiceOptions } from '../services.ts';
import { isStoreUnavailable, unavailableReason } from '../domain/store-unavailable.ts';

/** Waits ms (injectable: tests pass one that does not really wait); rejects when signal aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export interface OpenWithRetryOptions {
  readiness: Readiness;
  services?: ServiceOptions;
  sleep?: Sleep;
  /** Aborting stops the waiting (SIGTERM during start-up). */
  signal?: AbortSignal;
  /** First delay (default 500 ms), doubled after each failure up to maxDelayMs (default 30 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** The opener (tests inject one). */
  open?: typeof openServices;
}

export async function openServicesWithRetry(config: Config, log: Logger, opts: OpenWithRetryOptions): ReturnType<typeof openServices> {
  const sleep = opts.sleep ?? realSleep;
  const open = opts.open ?? openServices;
  const maxDelayMs = opts.maxDelayMs ?? 30_000;
  let delayMs = opts.initialDelayMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      const opened = await open(config, log, {
        ...opts.services,
        onMigrating: () => opts.readiness.notReady('migrations-pending', 'applying pending store migrations (or waiting for another instance applying them)'),
      });
      if (attempt > 1) log.info({ attempt }, 'store reachable: starting');
      return opened;
    } catch (err) {
      if (!isStoreUnavailable(err)) throw err;
      const reason = unavailableReason(err);
      opts.readiness.notReady('store-unreachable', `the store is unreachable at start (${reason}); attempt ${attempt}, next in ${delayMs} ms`);
      log.warn({ attempt, reason, retryInMs: delayMs }, `store unreachable at start (${reason}): retrying in ${(delayMs / 1000).toFixed(1)} s`);
      await sleep(delayMs, opts.signal);
      delayMs = Math.min(delayMs * 2, maxDelayMs);
    }
  }
}
