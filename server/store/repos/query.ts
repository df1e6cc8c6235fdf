// The few shapes every repository repeats: insert a record, get one by environment and id, one
// record or none, a list of records, a newest-first page by seq, and a parameter bound in turn.
import { assertLimit, decodeCursor, pageOf, type CursorList } from '../cursor.ts';
import type { Sql } from '../sql.ts';
import type { Page } from '../../domain/store.ts';

type Queries = Pick<Sql<unknown, unknown>, 'one' | 'rows'>;

/** `insert(record)` of a table: one row, as the dialect maps it. */
export function inserter<T>(sql: Pick<Sql<unknown, unknown>, 'insert'>, table: string, toRow: (record: T) => object): (record: T) => Promise<void> {
  return async (record) => {
    await sql.insert(table, toRow(record));
  };
}

/** `get(environmentId, id)` of a table whose rows belong to an environment. */
export function getter<R, T>(sql: Queries, table: string, from: (r: R) => T): (environmentId: string, id: string) => Promise<T | null> {
  return (environmentId, id) => first(sql, from, `SELECT * FROM ${table} WHERE environment_id = $1 AND id = $2`, [environmentId, id]);
}

/** Appends v to params and returns its placeholder. */
export function bind(params: unknown[], v: unknown): string {
  params.push(v);
  return `$${params.length}`;
}

/** The record of the query's first row, or null. */
export async function first<R, T>(sql: Queries, from: (r: R) => T, text: string, params: readonly unknown[]): Promise<T | null> {
  const r = await sql.one<R>(text, params);
  return r === undefined ? null : from(r);
}

export async function all<R, T>(sql: Queries, from: (r: R) => T, text: string, params: readonly unknown[]): Promise<T[]> {
  return (await sql.rows<R>(text, params)).map(from);
}

/**
 * A newest-first page of `table` (events, deliveries: their seq is the cursor). `where` are
 * conditions on `params` so far; the page adds the cursor and the limit.
 */
export async function seqPage<R, T>(
  sql: Queries,
  table: 'events' | 'delivery_records',
  from: (r: R) => T,
  where: string[],
  params: unknown[],
  { limit, cursor }: { limit: number; cursor: string | null },
): Promise<Page<T>> {
  assertLimit(limit);
  const list: CursorList = table === 'events' ? 'events' : 'deliveries';
  const before = cursor === null ? null : decodeCursor(cursor, list);
  if (before !== null) where.push(`seq < ${bind(params, before)}`);
  const rows = await sql.rows<R & { seq: number }>(`SELECT * FROM ${table} WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ${bind(params, limit + 1)}`, params);
  return pageOf(rows, limit, (r) => r.seq, from, list);
}
