// The pruner's figures (retention/pruner.ts): rows removed per table, the age of the oldest
// event and delivery kept (what an operator alerts on when pruning falls behind), and each
// batch's own duration and outcome.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Clock } from '../domain/clock.ts';
import type { PruneResult } from '../domain/store.ts';

export interface RetentionMetrics {
  /** One batch: what it removed (or that another instance held the lock) and how long it took. */
  batch(result: PruneResult, seconds: number): void;
  /** A batch that failed (the store did not answer). */
  failed(seconds: number): void;
}

/** `buckets`: metrics.ts's for store transactions (a pruning batch is one). */
export function retentionMetrics(registers: Registry[], clock: Clock, buckets: number[]): RetentionMetrics {
  const rows = new Counter({
    name: 'retention_pruned_rows_total',
    help: 'Expired rows removed by the pruner, by table.',
    labelNames: ['table'] as const,
    registers,
  });
  const batches = new Histogram({
    name: 'retention_prune_batch_duration_seconds',
    help: 'Duration of one pruning batch (one short store transaction), by outcome: ran, skipped (another instance prunes), error.',
    labelNames: ['outcome'] as const,
    buckets,
    registers,
  });
  const oldest: { events: number | null; deliveries: number | null } = { events: null, deliveries: null };
  new Gauge({
    name: 'retention_oldest_row_age_seconds',
    help: 'Age of the oldest row kept, by table (events, deliveries), as the last pruning batch of this instance saw it; absent before one ran.',
    labelNames: ['table'] as const,
    registers,
    collect() {
      this.reset();
      for (const [table, at] of Object.entries(oldest)) if (at !== null) this.set({ table }, Math.max(0, (clock.now() - at) / 1000));
    },
  });
  return {
    batch(result, seconds) {
      batches.observe({ outcome: result.ran ? 'ran' : 'skipped' }, seconds);
      if (!result.ran) return;
      for (const [table, n] of Object.entries(result.deleted)) if (n > 0) rows.inc({ table }, n);
      oldest.events = result.oldest.events;
      oldest.deliveries = result.oldest.deliveries;
    },
    failed(seconds) {
      batches.observe({ outcome: 'error' }, seconds);
    },
  };
}
