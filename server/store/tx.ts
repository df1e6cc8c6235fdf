// What happens around a transaction, the same in both stores: the Tx handed to the domain
// (every repository call checked against the transaction still being open), the read view,
// and what runs after a commit (its callbacks, and the wake-up of the delivery listeners).
// Both run after the data is committed: a failing one is reported, never turned into an
// error for the caller.
import { repositories, type DialectHooks } from './repos/index.ts';
import type { Sql } from './sql.ts';
import type { ReadTx, Tx } from '../domain/store.ts';

/** How a store reports a failing callback (its logger). */
export type Report = (err: unknown, what: string) => void;

/** State of one open transaction; a store may run its calls its own way (`run`). */
export class TxScope {
  open = true;
  readonly callbacks: (() => void)[] = [];
  deliveriesReady = false;
  /** Environments whose transactions it changed; null while none (most transactions change none or one). */
  touched: Set<string> | null = null;
  /** Environments it recorded events in; null while none. */
  eventEnvironments: Set<string> | null = null;

  check(): void {
    if (!this.open) throw new Error('transaction already finished: do not keep the Tx beyond its callback');
  }

  /** Runs one repository call of the transaction, unless the transaction has ended. */
  exec<T>(op: () => Promise<T>): Promise<T> {
    try {
      this.check();
    } catch (err) {
      return Promise.reject(err); // repository methods are async: fail the same way
    }
    return this.run(op);
  }

  /** After the commit: the callbacks in order, then one wake-up when deliveries may be due. */
  committed(listeners: DeliveryListeners): void {
    if (this.deliveriesReady) this.callbacks.push(() => listeners.wake());
    const events = this.eventEnvironments;
    if (events) this.callbacks.push(() => listeners.eventsRecorded(events));
    for (const cb of this.callbacks) runSafely(cb, 'afterCommit callback', listeners.report);
  }

  /** How a store runs the calls of a transaction: here at once. */
  protected run<T>(op: () => Promise<T>): Promise<T> {
    return op();
  }
}

/** The Tx of one transaction: each repository call goes through scope.exec, and a Tx used after its transaction ended fails loudly. */
export function transactionView<B, J>(sql: Sql<B, J>, hooks: DialectHooks, scope: TxScope): Tx {
  const repos = repositories(sql, hooks, {
    deliveriesReady() {
      scope.deliveriesReady = true;
    },
    transactionsChanged(environmentId) {
      (scope.touched ??= new Set()).add(environmentId);
    },
    eventsRecorded(environmentId) {
      (scope.eventEnvironments ??= new Set()).add(environmentId);
    },
  });
  return {
    tenants: guard(repos.tenants, scope),
    transactions: guard(repos.transactions, scope),
    orders: guard(repos.orders, scope),
    events: guard(repos.events, scope),
    endpoints: guard(repos.endpoints, scope),
    deliveries: guard(repos.deliveries, scope),
    passkeys: guard(repos.passkeys, scope),
    sealed: guard(repos.sealed, scope),
    afterCommit(fn) {
      scope.check();
      scope.callbacks.push(fn);
    },
  };
}

/** The read view: the same repositories, no transaction around them. */
export function readView<B, J>(sql: Sql<B, J>, hooks: DialectHooks): ReadTx {
  return repositories(sql, hooks);
}

function guard<T extends object>(repo: T, scope: TxScope): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(repo)) {
    wrapped[name] = typeof value === 'function' ? (...args: unknown[]) => scope.exec(() => (value as (...a: unknown[]) => Promise<unknown>)(...args)) : value;
  }
  return wrapped as T;
}

/** The onDeliveriesReady and onEventsRecorded listeners of one store. */
export class DeliveryListeners {
  private readonly listeners = new Set<() => void>();
  private readonly eventListeners = new Set<(environmentId: string) => void>();

  constructor(readonly report: Report) {}

  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  addEvents(listener: (environmentId: string) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  wake(): void {
    for (const listener of this.listeners) runSafely(listener, 'onDeliveriesReady listener', this.report);
  }

  eventsRecorded(environments: Iterable<string>): void {
    for (const environmentId of environments) {
      for (const listener of this.eventListeners) runSafely(() => listener(environmentId), 'onEventsRecorded listener', this.report);
    }
  }

  clear(): void {
    this.listeners.clear();
    this.eventListeners.clear();
  }
}

function runSafely(fn: () => void, what: string, report: Report): void {
  try {
    fn();
  } catch (err) {
    // The data is committed; a failing callback must not turn that into an error for the caller.
    report(err, `${what} failed`);
  }
}
