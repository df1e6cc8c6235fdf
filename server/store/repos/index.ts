// The repositories of one store, assembled once for both dialects: a transaction's (Tx) and
// the read view (ReadTx). What the dialects do differently in a whole method comes in as a
// hook; everything else is the shared SQL of this folder.
import type { Sql } from '../sql.ts';
import type { ReadTx, TenantRepo, Tx } from '../types.ts';
import { deliveryRepo } from './deliveries.ts';
import { endpointRepo } from './endpoints.ts';
import { eventRepo } from './events.ts';
import { orderRepo } from './orders.ts';
import { tenantRepo } from './tenants.ts';
import { transactionRepo } from './transactions.ts';

export { formatOrderNumber } from './orders.ts';

export interface DialectHooks {
  /** The environment's next order number. */
  nextOrderNumber(environmentId: string): Promise<number>;
  adjustWallet: TenantRepo['adjustWallet'];
}

type Repositories = Omit<Tx, 'afterCommit'>;

/** Every repository over one connection; `ready` hears of writes that may have made deliveries due. */
export function repositories<B, J>(sql: Sql<B, J>, hooks: DialectHooks, ready: () => void = () => undefined): Repositories {
  return {
    tenants: tenantRepo(sql, hooks.adjustWallet),
    transactions: transactionRepo(sql),
    orders: orderRepo(sql, hooks.nextOrderNumber),
    events: eventRepo(sql),
    endpoints: endpointRepo(sql),
    deliveries: deliveryRepo(sql, ready),
  };
}

/** State of one open transaction; a store may run its calls its own way (`run`). */
export class TxScope {
  open = true;
  readonly callbacks: (() => void)[] = [];
  deliveriesReady = false;

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

  /** How a store runs the calls of a transaction: here at once. */
  protected run<T>(op: () => Promise<T>): Promise<T> {
    return op();
  }
}

/** The Tx of one transaction: each repository call goes through scope.exec, and a Tx used after its transaction ended fails loudly. */
export function transactionView<B, J>(sql: Sql<B, J>, hooks: DialectHooks, scope: TxScope): Tx {
  const repos = repositories(sql, hooks, () => {
    scope.deliveriesReady = true;
  });
  return {
    tenants: guard(repos.tenants, scope),
    transactions: guard(repos.transactions, scope),
    orders: guard(repos.orders, scope),
    events: guard(repos.events, scope),
    endpoints: guard(repos.endpoints, scope),
    deliveries: guard(repos.deliveries, scope),
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
