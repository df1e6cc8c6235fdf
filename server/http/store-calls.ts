// One request's store calls: every transaction, read and order creation of its handler takes
// the request's signal (aborted at its deadline, or when its client went away), and a write
// request (not GET or HEAD) keeps count of its writes, so that its deadline answer can say
// whether anything may have been written (504 outcome-unknown) or certainly nothing was (503
// store-unavailable). A read's answer at its deadline is 503 whatever it did: it counts nothing.
//
// Made for every request under a deadline (middleware/deadline.ts), so it costs what it is
// used for: the AbortController, and the listener on the client's own signal (which
// @hono/node-server makes on first use), only once a store call wants the signal.
import type { AppError } from '../domain/errors.ts';
import type { CallOptions, OrderCreated, OrderCreation, PayoutCreated, PayoutCreation, ReadTx, Store, Tx } from '../domain/store.ts';
import { StoreDecorator } from '../domain/store-decorator.ts';
import { CallCancelled } from '../domain/store-errors.ts';
import { isStoreUnavailable } from '../domain/store-unavailable.ts';

const ONCE = { once: true } as const;

export class StoreCalls implements EventListenerObject {
  #controller: AbortController | null = null;
  /** Whether the listener on the client's signal is registered (and must be removed). */
  #listening = false;
  /** The options of a call that gave none: the request's signal. */
  #options: CallOptions | null = null;
  /** Writes not settled yet, and whether a settled one may have written (write requests only). */
  private pending = 0;
  private wrote = false;
  /**
   * Set by the deadline once it answers in the handler's stead, with that answer: the handler
   * still running is abandoned, and its own end is nobody's answer (http/errors.ts).
   */
  abandoned = false;
  answer: AppError | null = null;

  /**
   * @param client the request as it came: its signal is aborted when the client goes away.
   * @param countsWrites whether the request's answer at its deadline depends on its writes (not GET, HEAD).
   */
  constructor(
    private readonly client: Request,
    readonly countsWrites: boolean,
  ) {}

  /** The request's signal: aborted at its deadline (abort) or when its client goes away. */
  get signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = (this.#controller = new AbortController());
    const gone = this.client.signal;
    if (gone.aborted) controller.abort(gone.reason);
    else {
      gone.addEventListener('abort', this, ONCE);
      this.#listening = true;
    }
    return controller.signal;
  }

  /** The client went away: its store calls not started never start. */
  handleEvent(): void {
    this.#listening = false;
    this.#controller!.abort(this.client.signal.reason);
  }

  /** Aborts the request's signal (its deadline passed). */
  abort(reason: Error): void {
    (this.#controller ??= new AbortController()).abort(reason);
  }

  /** The request is over: stop listening to its client. */
  end(): void {
    if (!this.#listening) return;
    this.#listening = false;
    this.client.signal.removeEventListener('abort', this);
  }

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
    if (o?.signal) return { signal: AbortSignal.any([o.signal, this.signal]) };
    return (this.#options ??= { signal: this.signal });
  }

  /**
   * A write once the request's signal is aborted never reaches the store: the deadline may
   * already have told the caller that nothing was written, which must stay true whatever the
   * store would do with the signal.
   */
  write<T>(start: () => Promise<T>): Promise<T> {
    if (this.signal.aborted) return Promise.reject(new CallCancelled());
    if (!this.countsWrites) return start();
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

/** A store whose every call carries one request's signal (and, on a write request, counts its writes: StoreCalls). */
class SignalledStore extends StoreDecorator {
  constructor(
    base: Store,
    private readonly calls: StoreCalls,
  ) {
    super(base);
  }
  override transaction<T>(fn: (tx: Tx) => Promise<T>, o?: CallOptions): Promise<T> {
    return this.calls.write(() => this.base.transaction(fn, this.calls.options(o)));
  }
  override read<T>(fn: (tx: ReadTx) => Promise<T>, o?: CallOptions): Promise<T> {
    return this.base.read(fn, this.calls.options(o));
  }
  override createOrder(c: OrderCreation, o?: CallOptions): Promise<OrderCreated> {
    return this.calls.write(() => this.base.createOrder(c, this.calls.options(o)));
  }
  override createPayout(c: PayoutCreation, o?: CallOptions): Promise<PayoutCreated> {
    return this.calls.write(() => this.base.createPayout(c, this.calls.options(o)));
  }
}
