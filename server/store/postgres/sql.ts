// The repositories' view of a PostgreSQL connection (../sql.ts): Conn already speaks $n.
import { fanOutDeliveryIdSql } from '../fan-out.ts';
import type { DialectHooks } from '../repos/index.ts';
import { bind } from '../repos/query.ts';
import type { Sql } from '../sql.ts';
import { assertDecimal8, insertIgnoring, shortDecimal, type Conn } from './db.ts';
import type { OrderNumbers } from './order-numbers.ts';
import { mapping, untargetedDeliveryRow } from './rows.ts';

export function postgresSql(db: Conn): Sql<boolean, unknown> {
  return {
    map: mapping,
    one: <R>(text: string, params: readonly unknown[]) => db.one(text, params) as Promise<R | undefined>,
    rows: <R>(text: string, params: readonly unknown[]) => db.rows(text, params) as Promise<R[]>,
    run: (text, params) => db.run(text, params),
    insert: (table, row) => db.insert(table, row),
    // PostgreSQL aborts the whole transaction on an error: a savepoint keeps it usable.
    guarded: (op) => db.guarded(op),
    commitOrder: 'transaction',
    true: 'TRUE',
    anyOf(column, values, params) {
      params.push([...values]);
      return `${column} = ANY($${params.length}::text[])`;
    },
    receives,
  };
}

/** Sql.receives: the endpoint's JSON list of event types (text) holds `type`, or is NULL (every type). */
export function receives(eventTypes: string, type: string): string {
  return `(${eventTypes} IS NULL OR jsonb_exists(${eventTypes}::jsonb, ${type}))`;
}

/**
 * Adds $2 to the wallet of environment $1 unless the result would go below zero: one guarded
 * UPDATE, so the row lock orders concurrent debits (from any instance) and the guard sees the
 * latest balance. NUMERIC arithmetic is exact.
 */
const ADJUST_WALLET = `UPDATE environments SET wallet_balance = wallet_balance + $2::numeric WHERE id = $1 AND wallet_balance + $2::numeric >= 0`;

/**
 * What PostgreSQL does its own way: order numbers from `numbers`, outside the transaction
 * (autocommit, in blocks: see order-numbers.ts); the wallet in one guarded UPDATE.
 */
export function postgresHooks(db: Conn, numbers: OrderNumbers): DialectHooks {
  return {
    insertionOrder: 'seq',
    nextOrderNumber: (environmentId) => numbers.next(environmentId),
    async adjustWallet(environmentId, delta) {
      // delta is checked to have at most the column's 8 places.
      const r = await db.one<{ balance: string }>(`${ADJUST_WALLET} RETURNING wallet_balance::text AS balance`, [environmentId, assertDecimal8(delta)]);
      return r ? shortDecimal(r.balance) : null;
    },
    async insertAndAdjustWallet({ table, row }, environmentId, delta) {
      // One round trip instead of two (each a wait of the group commit's one executing
      // connection). adjustWallet's UPDATE, run only if the row went in: a conflict leaves the
      // wallet unlocked and the transaction usable, as Conn.insert does.
      const r = await db.one<{ inserted: number; balance: string | null }>(
        `WITH t AS (${insertIgnoring(table, row, 3)} RETURNING 1),
              w AS (${ADJUST_WALLET} AND EXISTS (SELECT 1 FROM t) RETURNING wallet_balance::text AS balance)
         SELECT (SELECT count(*) FROM t)::int AS inserted, (SELECT balance FROM w) AS balance`,
        [environmentId, assertDecimal8(delta), ...Object.values(row)],
      );
      if (r?.inserted !== 1) throw await db.conflictOf(table, row);
      return r.balance === null ? null : shortDecimal(r.balance);
    },
    async insertWithEvent(endpointsOf, event, d, newOrder) {
      // One round trip instead of three (each a wait of the group commit's one executing
      // connection). The delivery's columns arrive as one JSON object typed by the table's row
      // type: bare parameters in a SELECT list would be typed as text.
      const m = mapping;
      const ev = m.eventToRow(event);
      const rest = untargetedDeliveryRow(d);
      const params: unknown[] = [event.environmentId, event.type, JSON.stringify(rest)];
      // Rows inserted by the statement's WITH clauses; foreign keys are checked at its end.
      const insertOf = (table: string, row: object): string =>
        `INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.values(row).map((v) => bind(params, v)).join(', ')})`;
      const order = newOrder === undefined ? '' : `o AS (${insertOf('orders', m.orderToRow(newOrder))}), `;
      const cols = Object.keys(rest);
      const col = (c: string): string => (c === 'id' ? fanOutDeliveryIdSql('r.id', 'ep.id', 'ep.rank') : `r.${c}`);
      const r = await db.one<{ id: string }>(
        `WITH ${order}ev AS (${insertOf('events', ev)}), ep AS (${endpointsOf})
         INSERT INTO deliveries (${cols.join(', ')}, endpoint_id, endpoint_version, url)
         SELECT ${cols.map(col).join(', ')}, ep.id, ep.version, ep.url
           FROM ep, json_populate_record(NULL::deliveries, $3::json) r
         ORDER BY ep.rank
         RETURNING id`,
        params,
      );
      return r !== undefined;
    },
  };
}
