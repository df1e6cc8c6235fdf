// Readiness (/readyz): whether this instance should get traffic. Not ready while starting,
// while the store is unreachable, while migrations are pending, and while draining at
// shutdown. /healthz stays a liveness probe (the process answers), so an orchestrator
// restarts a wedged process but only stops routing to one that is waiting for its database.
import type { Clock } from '../domain/clock.ts';
import type { Store } from '../domain/store.ts';
import { isStoreUnavailable, unavailableReason } from '../domain/store-unavailable.ts';

export type NotReadyReason = 'starting' | 'store-unreachable' | 'migrations-pending' | 'draining' | 'delivery-stalled' | 'heartbeat-lapsed';

export type ReadinessState = { ready: true } | { ready: false; reason: NotReadyReason; detail: string };

export interface Readiness {
  /** The state set by the lifecycle, without probing the store. */
  current(): ReadinessState;
  /** The lifecycle's state, and when that is ready a (cached) probe of the store. */
  check(): Promise<ReadinessState>;
  notReady(reason: Exclude<NotReadyReason, 'draining'>, detail: string): void;
  /** The store is open and migrated: probe it from now on. */
  serving(store: Store): void;
  /** The delivery worker's own state (worker.stalled): not ready while it cannot claim or record. */
  delivery(stalled: () => string | null): void;
  /** The instance's heartbeat (PostgreSQL): not ready while it says the instance must not serve. */
  heartbeat(notServing: () => string | null): void;
  /** Shutdown began: not ready for good. */
  draining(): void;
}

export interface ReadinessOptions {
  clock: Clock;
  /** How long a probe result is reused (default 1 s): a scrape storm does not hammer the store. */
  cacheMs?: number;
  /** A probe slower than this counts as unreachable (default 2 s). */
  probeTimeoutMs?: number;
}

export function createReadiness(opts: ReadinessOptions): Readiness {
  const cacheMs = opts.cacheMs ?? 1_000;
  const probeTimeoutMs = opts.probeTimeoutMs ?? 2_000;
  let state: ReadinessState = { ready: false, reason: 'starting', detail: 'the instance is starting' };
  let store: Store | null = null;
  let probed: { at: number; result: ReadinessState } | null = null;
  let probing: Promise<ReadinessState> | null = null;
  let deliveryStalled: () => string | null = () => null;
  let heartbeatLapsed: () => string | null = () => null;

  async function probe(s: Store): Promise<ReadinessState> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // An empty transaction: on PostgreSQL it needs a live connection (BEGIN … COMMIT).
      await Promise.race([
        s.transaction(async () => undefined),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(Object.assign(new Error('store probe timed out'), { code: 'ETIMEDOUT' })), probeTimeoutMs);
          timer.unref();
        }),
      ]);
      return { ready: true };
    } catch (err) {
      const why = isStoreUnavailable(err) ? unavailableReason(err) : 'store probe failed';
      return { ready: false, reason: 'store-unreachable', detail: `the store does not answer (${why})` };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Only the store's probe is cached: the delivery's state is read on every check. */
  function probeCached(s: Store): Promise<ReadinessState> {
    if (probed && opts.clock.now() - probed.at < cacheMs) return Promise.resolve(probed.result);
    probing ??= probe(s).then((result) => {
      probed = { at: opts.clock.now(), result };
      probing = null;
      return result;
    });
    return probing;
  }

  return {
    current: () => state,
    async check() {
      if (!state.ready || store === null) return state;
      const result = await probeCached(store);
      // Draining may have begun while probing.
      if (!state.ready) return state;
      if (!result.ready) return result;
      const lapsed = heartbeatLapsed();
      if (lapsed !== null) return { ready: false, reason: 'heartbeat-lapsed', detail: lapsed };
      const stalled = deliveryStalled();
      return stalled === null ? result : { ready: false, reason: 'delivery-stalled', detail: stalled };
    },
    notReady(reason, detail) {
      if (state.ready === false && state.reason === 'draining') return;
      state = { ready: false, reason, detail };
    },
    serving(s) {
      if (state.ready === false && state.reason === 'draining') return;
      store = s;
      probed = null;
      state = { ready: true };
    },
    delivery(stalled) {
      deliveryStalled = stalled;
    },
    heartbeat(notServing) {
      heartbeatLapsed = notServing;
    },
    draining() {
      state = { ready: false, reason: 'draining', detail: 'the instance is shutting down' };
    },
  };
}
