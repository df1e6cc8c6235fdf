// The store as one request's handler sees it: every transaction, read and order creation takes
// the request's signal (aborted at its deadline, or when its client went away), and the request
// keeps count of its writes, so that its deadline answer can say whether anything may have been
// written (504 outcome-unknown) or certainly nothing was (503 store-unavailable).
import type { CallOptions, Store } from '../domain/store.ts';
import { CallCancelled } from '../domain/store-errors.ts';
import { isStoreUnavailable } from '../store/unavailable.ts';

export class RequestStore {
  /** Writes not settled yet, and whether a settled one may have written. */
  private pending = 0;
  private wrote = false;

  constructor(readonly signal: AbortSignal) {}

  /** Whether a write of this request may be stored: one still running, or one that did not fail unwritten. */
  mayHaveWritten(): boolean {
    return this.wrote || this.pending > 0;
  }

  /** `store` with this request's signal on every call. */
  wrap(store: Store): Store {
    const opts = (o?: CallOptions): CallOptions => ({ signal: o?.signal ? AbortSignal.any([o.signal, this.signal]) : this.signal });
    return {
      kind: store.kind,
      queue: store.queue,
      migrate: () => store.migrate(),
      transaction: (fn, o) => this.write(() => store.transaction(fn, opts(o))),
      read: (fn, o) => store.read(fn, opts(o)),
      createOrder: (c, o) => this.write(() => store.createOrder(c, opts(o))),
      transactionsVersion: (environmentId) => store.transactionsVersion(environmentId),
      onDeliveriesReady: (listener) => store.onDeliveriesReady(listener),
      onEventsRecorded: (listener) => store.onEventsRecorded(listener),
      prune: (req) => store.prune(req),
      close: () => store.close(),
    };
  }

  /**
   * A write once the request's signal is aborted never reaches the store: the deadline may
   * already have told the caller that nothing was written, which must stay true whatever the
   * store would do with the signal.
   */
  private write<T>(start: () => Promise<T>): Promise<T> {
    if (this.signal.aborted) return Promise.reject(new CallCancelled());
    const call = start();
    this.pending += 1;
    const settled = (wrote: boolean): void => {
      this.pending -= 1;
      if (wrote) this.wrote = true;
    };
    // A 503-class failure (a cancelled or refused call among them) wrote nothing; anything else may have.
    call.then(
      () => settled(true),
      (err: unknown) => settled(!(err instanceof CallCancelled) && !isStoreUnavailable(err)),
    );
    return call;
  }
}
