// The pruner: removes what the retention policy (spec/README.md, "Retention") lets expire, in
// the background, so that a database that has run longer than the retention stops growing.
//
// It never competes with the hot path for long: each batch is one short store transaction of
// at most `batch` rows per table (Store.prune), batches are separated by `pauseMs` so the API's
// and the delivery worker's transactions get the writer in between, and longer while the
// instance is busy (pacing.ts: at most `busyShare` of the time); a pass (batches until
// nothing expired is left) starts every `intervalMs`. On PostgreSQL one instance prunes at a
// time (the store's advisory lock); the others' batches come back skipped. Every wait goes
// through Timers, every time through the Clock.
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { RetentionMetrics } from '../observability/retention-metrics.ts';
import type { PruneResult, Store } from '../domain/store.ts';
import type { Timers } from '../timers.ts';
import { BUSY_UTILISATION, busyRest, eventLoopProbe, type LoadProbe } from './pacing.ts';

/** How long rows are kept, in milliseconds (config.ts: RETENTION_*). */
export interface RetentionPolicy {
  liveMs: number;
  testMs: number;
  idempotencyKeyMs: number;
}

export interface PrunerOptions {
  store: Store;
  clock: Clock;
  timers: Timers;
  log: Logger;
  policy: RetentionPolicy;
  /** Time from the end of one pass to the start of the next. */
  intervalMs: number;
  /** Rows per table per batch. */
  batch: number;
  /** Pause between two batches of a pass. */
  pauseMs: number;
  /** The most of the time the pruner takes while the instance is busy (0 < share <= 1). */
  busyShare: number;
  /** How busy the instance is (default: its event loop's utilisation). */
  load?: LoadProbe;
  /** Each batch statement's bound (PruneRequest.statementMs); default the store's. */
  statementMs?: number;
  metrics?: RetentionMetrics;
  /** Runs each batch inside a span (tracing on: observability/tracing/pruner.ts). */
  traceBatch?: (run: () => Promise<PruneResult>) => Promise<PruneResult>;
}

/** What one pass removed, and how long its batches held the store in all. */
export interface PassSummary {
  batches: number;
  deleted: PruneResult['deleted'];
  storeMs: number;
}

export interface Pruner {
  start(): void;
  /** Stops after the batch in progress, if any. */
  stop(): Promise<void>;
  /** One pass now (tests, the soak benchmark); not while the loop runs one. */
  pass(): Promise<PassSummary>;
}

export function createPruner(o: PrunerOptions): Pruner {
  const load = o.load ?? eventLoopProbe;
  let stopped = false;
  /** Ends each wait in progress (stop): the loop's and a pass()'s may overlap, so each has its own. */
  const waits = new Set<() => void>();
  let running: Promise<unknown> | null = null;
  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const end = (): void => {
        o.timers.clearTimeout(timer);
        waits.delete(end);
        resolve();
      };
      const timer = o.timers.setTimeout(end, ms);
      waits.add(end);
    });

  const batch = (): Promise<PruneResult> => (o.traceBatch ? o.traceBatch(pruneBatch) : pruneBatch());

  async function pruneBatch(): Promise<PruneResult> {
    const now = o.clock.now();
    const started = performance.now();
    try {
      const r = await o.store.prune({
        activityBefore: { live: now - o.policy.liveMs, test: now - o.policy.testMs },
        keysBefore: now - o.policy.idempotencyKeyMs,
        limit: o.batch,
        ...(o.statementMs === undefined ? {} : { statementMs: o.statementMs }),
      });
      o.metrics?.batch(r, (performance.now() - started) / 1000);
      return r;
    } catch (err) {
      o.metrics?.failed((performance.now() - started) / 1000);
      throw err;
    }
  }

  /** The pause after a batch, and while the instance was busy during it, the rest its share owes. */
  async function rest(batchMs: number): Promise<void> {
    const mark = load.mark();
    await wait(o.pauseMs);
    if (stopped || load.since(mark) < BUSY_UTILISATION) return;
    await wait(busyRest(batchMs, o.busyShare, o.pauseMs));
  }

  async function pass(): Promise<PassSummary> {
    const summary: PassSummary = { batches: 0, deleted: { events: 0, deliveries: 0, attempts: 0, idempotencyKeys: 0 }, storeMs: 0 };
    for (;;) {
      const started = performance.now();
      const clockStarted = o.clock.now();
      const r = await batch();
      summary.storeMs += performance.now() - started;
      summary.batches++;
      for (const k of Object.keys(summary.deleted) as (keyof PassSummary['deleted'])[]) summary.deleted[k] += r.deleted[k];
      if (!r.more || stopped) return summary;
      await rest(o.clock.now() - clockStarted);
      if (stopped) return summary;
    }
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        const s = await (running = pass());
        if (s.deleted.deliveries + s.deleted.events + s.deleted.idempotencyKeys > 0) o.log.info({ ...s.deleted, batches: s.batches, storeMs: Math.round(s.storeMs) }, 'pruned expired rows');
      } catch (err) {
        // The store may be away for a while (PostgreSQL restarting): try again next interval.
        o.log.warn({ err }, 'pruning failed');
      } finally {
        running = null;
      }
      if (!stopped) await wait(o.intervalMs);
    }
  }

  let looping: Promise<void> | null = null;
  return {
    start() {
      if (looping || stopped) return;
      looping = loop();
    },
    async stop() {
      stopped = true;
      for (const end of [...waits]) end();
      await looping;
    },
    pass: () => {
      if (running) throw new Error('a pass is already running');
      return pass();
    },
  };
}
