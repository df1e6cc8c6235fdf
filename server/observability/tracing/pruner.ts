// A span for each of the pruner's batches (retention/pruner.ts): a trace of its own (nobody's
// request), with what it removed; the store's prune call is its child (store.ts).
import { context, ROOT_CONTEXT, trace, type Tracer } from '@opentelemetry/api';
import type { PruneResult } from '../../domain/store.ts';
import { inSpan } from './store.ts';

export const PRUNE_BATCH_SPAN = 'retention.prune_batch';

export function pruneBatchTracer(tracer: Tracer): (run: () => Promise<PruneResult>) => Promise<PruneResult> {
  // From the root context: a batch belongs to no request that happens to be active (pass() in tests).
  return (run) => context.with(ROOT_CONTEXT, () => batchSpan(tracer, run));
}

function batchSpan(tracer: Tracer, run: () => Promise<PruneResult>): Promise<PruneResult> {
  return inSpan(tracer, PRUNE_BATCH_SPAN, {}, async () => {
    const r = await run();
    const span = trace.getActiveSpan();
    span?.setAttributes({
      'retention.ran': r.ran,
      'retention.more': r.more,
      'retention.deleted.events': r.deleted.events,
      'retention.deleted.deliveries': r.deleted.deliveries,
      'retention.deleted.attempts': r.deleted.attempts,
      'retention.deleted.idempotency_keys': r.deleted.idempotencyKeys,
    });
    return r;
  });
}
