// What the repositories (repos/) ask of a database, so that each query is written once for
// both stores. Queries use PostgreSQL's numbered placeholders ($1 … $n); SQLite's layer turns
// them into its own. The few places where the two dialects' SQL differs are named here;
// what differs in a whole method or statement (order numbers, the wallet, insertion order, the
// one-statement insert of an event and its delivery) is a hook of repos/hooks.ts.
import type { RowMapping } from './rows.ts';

export interface Sql<B, J> {
  /** The dialect's row mappers (rows.ts). */
  readonly map: RowMapping<B, J>;
  /** The first row, or undefined. */
  one<R>(text: string, params: readonly unknown[]): Promise<R | undefined>;
  rows<R>(text: string, params: readonly unknown[]): Promise<R[]>;
  /** Runs a write; returns how many rows it touched. */
  run(text: string, params: readonly unknown[]): Promise<number>;
  /** INSERT of one row (keys are column names); a broken uniqueness rule throws UniqueViolation. */
  insert(table: string, row: object): Promise<void>;
  /** Runs a write that may break a uniqueness rule so that the transaction stays usable when the caller catches it. */
  guarded<T>(op: () => Promise<T>): Promise<T>;
  /** What orders events by commit for the event stream (repos/event-stream.ts): seq (one writer), or the writing transaction's id. */
  readonly commitOrder: 'seq' | 'transaction';
  /** The literal a boolean column is compared with (as the partial indexes are written). */
  readonly true: string;
  /** The condition "column is one of values"; appends what it binds to params. */
  anyOf(column: string, values: readonly string[], params: unknown[]): string;
  /** The condition "an endpoint whose event_types column is `eventTypes` receives the event type `type`" (NULL: every type). */
  receives(eventTypes: string, type: string): string;
}
