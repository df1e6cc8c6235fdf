// What each store's dialect supplies to the shared repositories (index.ts): in a module of its
// own, so that a repository can name it without importing the index that imports it.
import type { DeliveryRepo, TenantRepo } from '../../domain/store.ts';

export interface DialectHooks {
  /** The column that orders rows of transactions and webhook_endpoints by insertion: PostgreSQL's seq, SQLite's rowid. */
  readonly insertionOrder: string;
  /** The environment's next order number. */
  nextOrderNumber(environmentId: string): Promise<number>;
  adjustWallet: TenantRepo['adjustWallet'];
  /**
   * INSERT of `row` into `table`, then adjustWallet if it went in, in one statement; a conflict
   * is the store's UniqueViolation. Absent where two statements cost no more (SQLite).
   */
  insertAndAdjustWallet?(insert: { table: string; row: object & { id?: unknown } }, environmentId: string, delta: string): Promise<string | null>;
  /**
   * DeliveryRepo.insertWithEvent's writes (the new order if any, the event, a delivery to each
   * endpoint `endpointsOf` selects: id, version, url, rank; $1 is the environment, $2 the
   * event's type) in one statement; true if a delivery went in. Absent where separate
   * statements cost no more (SQLite).
   */
  insertWithEvent?(endpointsOf: string, ...rows: Parameters<DeliveryRepo['insertWithEvent']>): Promise<boolean>;
}
