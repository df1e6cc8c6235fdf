// What each store's dialect supplies to the shared repositories (index.ts): in a module of its
// own, so that a repository can name it without importing the index that imports it.
import type { TenantRepo } from '../types.ts';

export interface DialectHooks {
  /** The environment's next order number. */
  nextOrderNumber(environmentId: string): Promise<number>;
  adjustWallet: TenantRepo['adjustWallet'];
  /**
   * INSERT of `row` into `table`, then adjustWallet if it went in, in one statement; a conflict
   * is the store's UniqueViolation. Absent where two statements cost no more (SQLite).
   */
  insertAndAdjustWallet?(insert: { table: string; row: object & { id?: unknown } }, environmentId: string, delta: string): Promise<string | null>;
}
