// Store.createOrder for the orders a group-committed batch holds, in one statement (a BulkStatement of
// group-commit.ts). Alone, an order is three round trips on the batch's one executing
// connection (its rows; its idempotency key; the savepoint around it), each a statement
// PostgreSQL parses and plans: under load those waits, not the database's work, set the rate.
// Here the batch's orders go as typed arrays, one per column, and the unique key of
// order_idempotency_keys decides every order's fate inside the statement, when any order has
// a key: an order whose key
// is already taken (committed earlier, by a concurrent batch meanwhile, or by an earlier order
// of the same statement) inserts nothing, and its caller reads the winner after the commit.
// Its number, taken before the statement, stays unused: a gap, as a rolled-back order leaves.
import type pg from 'pg';
import type { OrderCreated, OrderCreation } from '../../domain/store.ts';
import type { DeliveryListeners } from '../tx.ts';
import { formatOrderNumber, idempotencyKeyRow } from '../repos/orders.ts';
import type { BulkStatement, Outcome } from './group-commit.ts';
import type { OrderNumbers } from './order-numbers.ts';
import { mapping as m, untargetedDeliveryRow } from './rows.ts';
import { fanOutDeliveryIdSql } from '../fan-out.ts';
import { receives } from './sql.ts';

/** The delivery row's columns that each active endpoint taking the event fills in. */
const TARGET = ['endpoint_id', 'endpoint_version', 'url'];

type Row = Record<string, unknown>;

/** Each column's type of the tables written here, from the catalog (read once): what the arrays are cast to. */
type Types = Map<string, string>;

async function columnTypes(client: pg.PoolClient): Promise<Types> {
  const r = await client.query<{ t: string; c: string; type: string }>(
    `SELECT c.relname AS t, a.attname AS c, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relname IN ('orders', 'events', 'deliveries', 'order_idempotency_keys') AND c.relnamespace = current_schema()::regnamespace
        AND a.attnum > 0 AND NOT a.attisdropped`,
  );
  return new Map(r.rows.map((x) => [`${x.t}.${x.c}`, x.type]));
}

/**
 * One table's rows as parameters: each column as one typed array (unnest), whatever the rows
 * share. The statement's text then depends on nothing the batch holds (a column sent as one
 * value where the rows agree made one prepared statement per pattern of shared columns, which
 * clients steer: every pattern was prepared on every pool connection and never released).
 */
class Columns {
  constructor(
    readonly table: string,
    readonly names: readonly string[],
  ) {}

  /** Binds the parameters; returns the FROM clause (rows as `r`, in order) and each column's expression. */
  bind(rows: readonly object[], types: Types, values: unknown[]): { from: string; exprs: string[] } {
    const cast = (c: string): string => types.get(`${this.table}.${c}`) ?? 'text';
    const arrays = this.names.map((c) => `$${values.push(rows.map((r) => (r as Row)[c]))}::${cast(c)}[]`);
    return { from: `unnest(${arrays.join(', ')}) WITH ORDINALITY AS r(${this.names.join(', ')}, ordinality)`, exprs: this.names.map((c) => `r.${c}`) };
  }
}

/**
 * The statement for a batch's rows, and its values. Rows go in the orders' order, which the
 * inserts keep (events' seq: the stream's order inside one transaction); foreign keys are
 * checked at the statement's end, when every table has its rows. With keys, the unique key of
 * order_idempotency_keys decides which orders are written (`won`); without, every order is.
 */
function statement(rows: ReturnType<typeof rowsOf>[], types: Types): { name: string; text: string; values: unknown[] } {
  const keyRows = rows.flatMap((x) => (x.key === null ? [] : [x.key]));
  const orders = new Columns('orders', Object.keys(rows[0]!.order));
  const events = new Columns('events', Object.keys(rows[0]!.event));
  const deliveries = new Columns('deliveries', Object.keys(rows[0]!.delivery));
  const keys = keyRows.length === 0 ? null : new Columns('order_idempotency_keys', Object.keys(keyRows[0]!));
  const values: unknown[] = [];
  const o = orders.bind(rows.map((x) => x.order), types, values);
  const ev = events.bind(rows.map((x) => x.event), types, values);
  const d = deliveries.bind(rows.map((x) => x.delivery), types, values);
  // Each delivery's event type, by the same ordinality: which endpoints take it (the fan-out).
  const eventTypes = `$${values.push(rows.map((x) => x.event.type))}::text[]`;
  const dExprs = d.exprs.map((e) => (e === 'r.id' ? fanOutDeliveryIdSql('r.id', 'ep.id', 'ep.rank') : e));
  const won = (expr: string): string => (keys === null ? '' : ` WHERE ${expr} IN (SELECT id FROM won)`);
  let withKeys = '';
  if (keys !== null) {
    const k = keys.bind(keyRows, types, values);
    const keyless = `$${values.push(rows.filter((x) => x.key === null).map((x) => x.order.id))}::text[]`;
    withKeys = `k AS (
      INSERT INTO order_idempotency_keys (${keys.names.join(', ')})
      SELECT ${k.exprs.join(', ')} FROM ${k.from} ORDER BY r.ordinality
      ON CONFLICT (environment_id, idempotency_key) DO NOTHING
      RETURNING order_id),
    won AS (SELECT order_id AS id FROM k UNION ALL SELECT unnest(${keyless})),
    `;
  }
  const text = `WITH ${withKeys}o AS (INSERT INTO orders (${orders.names.join(', ')})
      SELECT ${o.exprs.join(', ')} FROM ${o.from}${won('r.id')} ORDER BY r.ordinality),
    ev AS (INSERT INTO events (${events.names.join(', ')})
      SELECT ${ev.exprs.join(', ')} FROM ${ev.from}${won('r.order_id')} ORDER BY r.ordinality),
    d AS (INSERT INTO deliveries (${deliveries.names.join(', ')}, ${TARGET.join(', ')})
      SELECT ${dExprs.join(', ')}, ep.id, ep.version, ep.url
        FROM ${d.from}
        JOIN unnest(${eventTypes}) WITH ORDINALITY AS t(type, ordinality) ON t.ordinality = r.ordinality
        CROSS JOIN LATERAL (
          SELECT id, version, url, row_number() OVER (ORDER BY id) AS rank FROM webhook_endpoints
           WHERE environment_id = r.environment_id AND active = TRUE AND ${receives('event_types', 't.type')}) ep
       ${keys === null ? '' : 'WHERE r.order_id IN (SELECT id FROM won) '}ORDER BY r.ordinality, ep.rank
      RETURNING order_id)
    SELECT ${keys === null ? 'NULL::text[]' : '(SELECT array_agg(id) FROM won)'} AS created, (SELECT array_agg(order_id) FROM d) AS delivered`;
  // Two texts in all (with keys, without): each is prepared once per connection.
  return { name: keys === null ? 'bulk-orders' : 'bulk-orders-keys', text, values };
}

/** The rows of one creation, its order numbered. */
function rowsOf(c: OrderCreation, orderNumber: string) {
  const o = c.order;
  return {
    order: m.orderToRow({ ...o, orderNumber }),
    event: m.eventToRow(c.event),
    delivery: untargetedDeliveryRow(c.delivery),
    key: c.idempotency === null ? null : idempotencyKeyRow(o.environmentId, c.idempotency.key, { orderId: o.id, requestHash: c.idempotency.requestHash, createdAt: o.createdAt }),
  };
}

/** The orders of a batch as one statement; `listeners` hear of its events and deliveries once committed. */
export function bulkOrders(numbers: OrderNumbers, listeners: DeliveryListeners): BulkStatement<OrderCreation, OrderCreated> {
  let types: Promise<Types> | null = null;
  return {
    async run(client: pg.PoolClient, items: readonly OrderCreation[]): Promise<Outcome<OrderCreated>[]> {
      const numbered = await Promise.all(items.map(async (c) => ({ ...c.order, orderNumber: formatOrderNumber(await numbers.next(c.order.environmentId)) })));
      const rows = items.map((c, i) => rowsOf(c, numbered[i]!.orderNumber));
      types ??= columnTypes(client).catch((err: unknown) => {
        types = null; // asked again by the next batch
        throw err;
      });
      const r = await client.query<{ created: string[] | null; delivered: string[] | null }>(statement(rows, await types));
      // Without keys every order of the statement was written.
      const created = new Set(r.rows[0]?.created ?? (items.some((c) => c.idempotency !== null) ? [] : items.map((c) => c.order.id)));
      const delivered = new Set(r.rows[0]?.delivered ?? []);
      return items.map((c, i) => outcome(c, numbered[i]!, created.has(c.order.id), delivered.has(c.order.id), listeners));
    },
  };
}

function outcome(c: OrderCreation, order: OrderCreation['order'] & { orderNumber: string }, created: boolean, delivery: boolean, listeners: DeliveryListeners): Outcome<OrderCreated> {
  if (!created) return { value: { created: false }, notify: false, touched: null, committed: () => undefined };
  return {
    value: { created: true, order, delivery },
    notify: delivery,
    touched: null,
    committed() {
      // As a transaction's scope does (tx.ts): its delivery's wake-up, then its event's.
      if (delivery) listeners.wake();
      listeners.eventsRecorded([c.order.environmentId]);
    },
  };
}
