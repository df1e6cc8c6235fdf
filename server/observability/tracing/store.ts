// The store, traced from outside (as observability/metrics.ts measures it): a span for each
// store call of a request (transaction, read, createOrder) and, inside it, the group commit's
// own spans: how long the unit waited in the queue for a batch, and how long its batch's COMMIT
// and sync took (the committers' UnitObserver, domain/unit-observer.ts). The events a traced
// call records keep the caller's trace context (EventRecord.traceContext): their delivery
// attempts link back to it (delivery.ts).
import { context, propagation, SpanStatusCode, trace, type Attributes, type Tracer } from '@opentelemetry/api';
import { ATTR_DB_SYSTEM_NAME, ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { EventRecord } from '../../domain/model.ts';
import type { CallOptions, OrderCreated, OrderCreation, PayoutCreated, PayoutCreation, PruneRequest, PruneResult, ReadTx, Store, Tx } from '../../domain/store.ts';
import { StoreDecorator } from '../../domain/store-decorator.ts';
import type { UnitObserver } from '../../domain/unit-observer.ts';
import { epochAt, epochNow } from './clock.ts';

/** Span names, for the operator's queries and the tests. */
export const STORE_SPANS = {
  transaction: 'store.transaction',
  read: 'store.read',
  createOrder: 'store.createOrder',
  createPayout: 'store.createPayout',
  prune: 'store.prune',
  wait: 'group_commit.wait',
  commit: 'group_commit.commit',
} as const;

/** The traceparent of the active span, when it is a sampled one worth linking to. */
export function activeTraceparent(): string | undefined {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return undefined;
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The active span, when it is a live, sampled one: what a store call's span would be a child of. */
function recordingParent(): boolean {
  return trace.getActiveSpan()?.isRecording() === true;
}

const ignore = (): void => undefined;

/**
 * `fn` in a store call's span, only inside a live span (a request's, a pruner batch's): a store
 * call alone (the delivery queue's, an event stream's polls after its request span ended) is
 * no trace worth exporting.
 */
function storeSpan<T>(tracer: Tracer, name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  return recordingParent() ? inSpan(tracer, name, attributes, fn) : fn();
}

/** Runs `fn` in a new active span named `name`; a throw marks it failed. */
export async function inSpan<T>(tracer: Tracer, name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes, startTime: epochNow() }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.setAttribute(ATTR_ERROR_TYPE, err instanceof Error ? err.name : 'Error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end(epochNow());
    }
  });
}

/** `tx` whose event inserts carry `traceContext`; everything else is tx's own. */
function stamped(tx: Tx, traceContext: string): Tx {
  const stamp = (e: EventRecord): EventRecord => ({ ...e, traceContext });
  const events: Tx['events'] = Object.create(tx.events) as Tx['events'];
  events.insert = (e) => tx.events.insert(stamp(e));
  const deliveries: Tx['deliveries'] = Object.create(tx.deliveries) as Tx['deliveries'];
  deliveries.insertWithEvent = (e, d, newOrder) => tx.deliveries.insertWithEvent(stamp(e), d, newOrder);
  return Object.assign(Object.create(tx) as Tx, { events, deliveries });
}

/** The store with its calls traced (tracing on only: buildApp wraps it then and only then). */
export function traceStore(store: Store, tracer: Tracer): Store {
  return new TracedStore(store, tracer);
}

/** A span for each call of a request, and that request's trace context on the events it records; the rest forwarded as it is. */
class TracedStore extends StoreDecorator {
  readonly #attributes: Attributes;

  constructor(
    base: Store,
    private readonly tracer: Tracer,
  ) {
    super(base);
    this.#attributes = { [ATTR_DB_SYSTEM_NAME]: base.kind === 'postgres' ? 'postgresql' : 'sqlite' };
  }

  override read<T>(fn: (tx: ReadTx) => Promise<T>, opts?: CallOptions): Promise<T> {
    return this.#span(STORE_SPANS.read, () => this.base.read(fn, opts));
  }

  override transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: CallOptions): Promise<T> {
    // The caller's (the request's) context, taken before the store span opens.
    const traceContext = activeTraceparent();
    const run = traceContext === undefined ? fn : (tx: Tx) => fn(stamped(tx, traceContext));
    return this.#span(STORE_SPANS.transaction, () => this.base.transaction(run, opts));
  }

  override createOrder(c: OrderCreation, opts?: CallOptions): Promise<OrderCreated> {
    const traceContext = activeTraceparent();
    const traced = traceContext === undefined ? c : { ...c, event: { ...c.event, traceContext } };
    return this.#span(STORE_SPANS.createOrder, () => this.base.createOrder(traced, opts));
  }

  override createPayout(c: PayoutCreation, opts?: CallOptions): Promise<PayoutCreated> {
    return this.#span(STORE_SPANS.createPayout, () => this.base.createPayout(c, opts));
  }

  override prune(req: PruneRequest): Promise<PruneResult> {
    return this.#span(STORE_SPANS.prune, () => this.base.prune(req));
  }

  #span<T>(name: string, fn: () => Promise<T>): Promise<T> {
    return storeSpan(this.tracer, name, this.#attributes, fn);
  }
}

/**
 * The group committers' observer: each unit runs in its caller's context (a batch runs every
 * caller's unit in the context of whichever started it), and once it is answered its wait in
 * the queue and its batch's commit become spans of the caller's store span, with the times
 * the committer measured.
 */
export function commitObserver(tracer: Tracer): UnitObserver {
  return {
    queued(run) {
      // Only under a live span (the store call's): the delivery queue's own units stay untraced.
      if (!recordingParent()) return { run, started: ignore, committing: ignore, ended: ignore };
      const ctx = context.active();
      const queuedAt = performance.now();
      let startedAt = -1;
      let commitAt = -1;
      return {
        run: context.bind(ctx, run),
        started(at) {
          if (startedAt < 0) startedAt = at;
        },
        committing(at) {
          commitAt = at;
        },
        ended(at, ok) {
          if (startedAt < 0) return;
          tracer.startSpan(STORE_SPANS.wait, { startTime: epochAt(queuedAt) }, ctx).end(epochAt(startedAt));
          if (commitAt < 0) return;
          const commit = tracer.startSpan(STORE_SPANS.commit, { startTime: epochAt(commitAt) }, ctx);
          if (!ok) commit.setStatus({ code: SpanStatusCode.ERROR });
          commit.end(epochAt(at));
        },
      };
    },
  };
}

/** Sets the observer on the store's group committer, where it has one (both stores do). */
export function observeCommits(store: Store, observer: UnitObserver): boolean {
  const committer = (store as { committer?: { observer?: UnitObserver | null } }).committer;
  if (committer === undefined || !('observer' in committer)) return false;
  committer.observer = observer;
  return true;
}
