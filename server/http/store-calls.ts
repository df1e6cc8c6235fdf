// The store as one request's handler sees it: every transaction, read and order creation takes
// the request's signal (aborted at its deadline, or when its client went away), and the request
// keeps count of its writes, so that its deadline answer can say whether anything may have been
// written (504 outcome-unknown) or certainly nothing was (503 store-unavailable).
import type { CallOptions, OrderCreated, OrderCreation, PruneRequest, PruneResult, ReadTx, Store, Tx } from '../domain/store.ts';
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

  /** `store` with this request's signal on every call (one object a request: its methods are shared). */
  wrap(store: Store): Store {
    return new SignalledStore(store, this);
  }

  /** The call's options with this request's signal (and the caller's, when it gave one). */
  options(o?: CallOptions): CallOptions {
    return { signal: o?.signal ? AbortSignal.any([o.signal, this.signal]) : this.signal };
  }

  /**
   * A write once the request's signal is aborted never reaches the store: the deadline may
   * already have told the caller that nothing was written, which must stay true whatever the
   * store would do with the signal.
   */
  write<T>(start: () => Promise<T>): Promise<T> {
    if (this.signal.aborted) return Promise.reject(new CallCancelled());
    const call = start();
    this.pending += 1;
    // A 503-class failure (a cancelled or refused call among them) wrote nothing; anything else may have.
    call.then(
      () => this.settled(true),
      (err: unknown) => this.settled(!(err instanceof CallCancelled) && !isStoreUnavailable(err)),
    );
    return call;
  }

  private settled(wrote: boolean): void {
    this.pending -= 1;
    if (wrote) this.wrote = true;
  }
}

/** A store whose every call carries one request's signal and counts its writes (RequestStore). */
class SignalledStore implements Store {
  constructor(
    private readonly store: Store,
    private readonly calls: RequestStore,
  ) {}
  get kind(): Store['kind'] {
    return this.store.kind;
  }
  get queue(): Store['queue'] {
    return this.store.queue;
  }
  migrate(): Promise<void> {
    return this.store.migrate();
  }
  transaction<T>(fn: (tx: Tx) => Promise<T>, o?: CallOptions): Promise<T> {
    return this.calls.write(() => this.store.transaction(fn, this.calls.options(o)));
  }
  read<T>(fn: (tx: ReadTx) => Promise<T>, o?: CallOptions): Promise<T> {
    return this.store.read(fn, this.calls.options(o));
  }
  createOrder(c: OrderCreation, o?: CallOptions): Promise<OrderCreated> {
    return this.calls.write(() => this.store.createOrder(c, this.calls.options(o)));
  }
  transactionsVersion(environmentId: string): string | null {
    return this.store.transactionsVersion(environmentId);
  }
  onDeliveriesReady(listener: () => void): () => void {
    return this.store.onDeliveriesReady(listener);
  }
  onEventsRecorded(listener: (environmentId: string) => void): () => void {
    return this.store.onEventsRecorded(listener);
  }
  prune(req: PruneRequest): Promise<PruneResult> {
    return this.store.prune(req);
  }
  close(): Promise<void> {
    return this.store.close();
  }
}
