// What happens around a transaction, the same in both stores: the Tx handed to the domain
// (every repository call checked against the transaction still being open), the read view,
// and what runs after a commit (its callbacks, and the wake-up of the delivery listeners).
// Both run after the data is committed: a failing one is reported, never turned into an
// error for the caller.
import { repositories, type DialectHooks, type Repositories, type WriteNotes } from './repos/index.ts';
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

/** What a transaction's writes report, kept on the scope that `current` names when they do. */
function notesTo(current: () => TxScope | null): WriteNotes {
  return {
    deliveriesReady() {
      const scope = current();
      if (scope) scope.deliveriesReady = true;
    },
    transactionsChanged(environmentId) {
      const scope = current();
      if (scope) (scope.touched ??= new Set()).add(environmentId);
    },
    eventsRecorded(environmentId) {
      const scope = current();
      if (scope) (scope.eventEnvironments ??= new Set()).add(environmentId);
    },
  };
}

/** The Tx of one transaction: each repository call goes through scope.exec, and a Tx used after its transaction ended fails loudly. */
export function transactionView<B, J>(sql: Sql<B, J>, hooks: DialectHooks, scope: TxScope): Tx {
  const checked = checkedRepositories(repositories(sql, hooks, notesTo(() => scope)));
  return bindView(checked, scope);
}

/**
 * The Tx of each transaction on a connection whose transactions run one at a time (SQLite's
 * writer: the group commit runs one unit after another). Building the repositories and their
 * checked methods costs more than many a transaction's statements, so it is done once per
 * connection; a transaction's Tx only binds them to its scope (one small object a repository).
 * A Tx kept beyond its transaction therefore still fails loudly, as transactionView's does.
 * The writes' notes go to the transaction that runs: the one whose Tx was made last.
 */
export class SerialTxViews<B, J> {
  private current: TxScope | null = null;
  private readonly checked: Repositories;

  constructor(sql: Sql<B, J>, hooks: DialectHooks) {
    this.checked = checkedRepositories(repositories(sql, hooks, notesTo(() => this.current)));
  }

  /** The Tx of the transaction about to run on the connection; its writes are noted on `scope` from now on. */
  view(scope: TxScope): Tx {
    this.current = scope;
    return bindView(this.checked, scope);
  }
}

/** The read view: the same repositories, no transaction around them. */
export function readView<B, J>(sql: Sql<B, J>, hooks: DialectHooks): ReadTx {
  return repositories(sql, hooks);
}

/** The scope a bound repository's calls go through (an own property of each transaction's repository object). */
const SCOPE = Symbol('tx scope');
type Bound = { readonly [SCOPE]?: TxScope };

/** Every repository with its methods checked against the scope of the object they are called on. */
function checkedRepositories(repos: Repositories): Repositories {
  return {
    tenants: checked(repos.tenants),
    transactions: checked(repos.transactions),
    orders: checked(repos.orders),
    events: checked(repos.events),
    endpoints: checked(repos.endpoints),
    deliveries: checked(repos.deliveries),
    passkeys: checked(repos.passkeys),
    sealed: checked(repos.sealed),
  };
}

/**
 * A prototype of `repo`'s methods, each going through the scope of the object it is called on
 * (`this`): one per connection, and each transaction's repositories inherit from it.
 */
function checked<T extends object>(repo: T): T {
  const proto: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(repo)) {
    if (typeof value !== 'function') {
      proto[name] = value;
      continue;
    }
    const method = value as (...a: unknown[]) => Promise<unknown>;
    proto[name] = function (this: Bound | undefined, ...args: unknown[]): Promise<unknown> {
      const scope = this?.[SCOPE];
      if (scope === undefined) return Promise.reject(new Error(`${name} called apart from its repository: call it as tx.<repository>.${name}(…)`));
      return scope.exec(() => method(...args));
    };
  }
  return proto as T;
}

/** One transaction's Tx: each repository an object of its own, bound to `scope`, inheriting the checked methods. */
function bindView(repos: Repositories, scope: TxScope): Tx {
  return {
    tenants: bind(repos.tenants, scope),
    transactions: bind(repos.transactions, scope),
    orders: bind(repos.orders, scope),
    events: bind(repos.events, scope),
    endpoints: bind(repos.endpoints, scope),
    deliveries: bind(repos.deliveries, scope),
    passkeys: bind(repos.passkeys, scope),
    sealed: bind(repos.sealed, scope),
    afterCommit(fn) {
      scope.check();
      scope.callbacks.push(fn);
    },
  };
}

function bind<T extends object>(proto: T, scope: TxScope): T {
  const own = Object.create(proto) as { [SCOPE]: TxScope };
  own[SCOPE] = scope;
  return own as unknown as T;
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
