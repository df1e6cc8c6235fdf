// The one way to decorate a Store: a class that forwards every member of the interface to its
// base, each call with all its arguments (the CallOptions, and with them the request's signal,
// among them). A decorator extends it and overrides only what it changes, so no hand-written
// forwarding can drop an argument (commit 6dca21a fixed one that did: TypeScript cannot see it,
// since a function ignoring a parameter type-checks). `implements Store` makes a member added
// to the port a compile error here until it is forwarded; store-decorator.test.ts runs the
// same contract over every decorator. A class, not an object of closures: the request's
// decorator is made per request (http/store-calls.ts), and a class costs one object.
import type { CallOptions, DeliveryQueue, OrderCreated, OrderCreation, PayoutCreated, PayoutCreation, PruneRequest, PruneResult, ReadTx, Store, Tx } from './store.ts';

export class StoreDecorator implements Store {
  constructor(protected readonly base: Store) {}

  get kind(): Store['kind'] {
    return this.base.kind;
  }

  get queue(): DeliveryQueue {
    return this.base.queue;
  }

  migrate(): Promise<void> {
    return this.base.migrate();
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: CallOptions): Promise<T> {
    return this.base.transaction(fn, opts);
  }

  read<T>(fn: (tx: ReadTx) => Promise<T>, opts?: CallOptions): Promise<T> {
    return this.base.read(fn, opts);
  }

  createOrder(c: OrderCreation, opts?: CallOptions): Promise<OrderCreated> {
    return this.base.createOrder(c, opts);
  }

  createPayout(c: PayoutCreation, opts?: CallOptions): Promise<PayoutCreated> {
    return this.base.createPayout(c, opts);
  }

  transactionsVersion(environmentId: string): string | null {
    return this.base.transactionsVersion(environmentId);
  }

  onDeliveriesReady(listener: () => void): () => void {
    return this.base.onDeliveriesReady(listener);
  }

  onEventsRecorded(listener: (environmentId: string) => void): () => void {
    return this.base.onEventsRecorded(listener);
  }

  prune(req: PruneRequest): Promise<PruneResult> {
    return this.base.prune(req);
  }

  close(): Promise<void> {
    return this.base.close();
  }
}
