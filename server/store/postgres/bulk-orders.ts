// Store.createOrder for the orders a group-committed batch holds, in one statement (a Bulk of
// group-commit.ts). Alone, an order is three round trips on the batch's one executing
// connection (its rows; its idempotency key; the savepoint around it), each a statement
// PostgreSQL parses and plans: under load those waits, not the database's work, set the rate.
// Here the batch's orders go as one JSON array a table, and the unique key of
// order_idempotency_keys decides every order's fate inside the statement: an order whose key
// is already taken (committed earlier, by a concurrent batch meanwhile, or by an earlier order
// of the same statement) inserts nothing, and its caller reads the winner after the commit.
// Its number, taken before the statement, stays unused: a gap, as a rolled-back order leaves.
import type pg from 'pg';
import type { OrderCreated, OrderCreation } from '../../domain/store.ts';
import type { DeliveryListeners } from '../tx.ts';
import { formatOrderNumber, idempotencyKeyRow } from '../repos/orders.ts';
import type { Bulk, Outcome } from './group-commit.ts';
import type { OrderNumbers } from './order-numbers.ts';
import { mapping as m, untargetedDeliveryRow } from './rows.ts';

/** The delivery row's columns that the active endpoint fills in. */
const TARGET = ['endpoint_id', 'endpoint_version', 'url'];

/**
 * The statement for rows with the columns of `row`. Each table's rows arrive as one JSON array
 * typed by the table's row type (json_populate_recordset), in the orders' order, which the inserts
 * keep (events' seq: the stream's order inside one transaction). Foreign keys are checked at
 * the statement's end, when every table has its rows. $5 names the orders without a key.
 */
function statement(row: ReturnType<typeof rowsOf>): string {
  const cols = {
    orders: Object.keys(row.order),
    events: Object.keys(row.event),
    deliveries: Object.keys(row.delivery),
    keys: Object.keys(idempotencyKeyRow('', '', { orderId: '', requestHash: '', createdAt: 0 })),
  };
  const from = (table: string, param: number): string => `json_populate_recordset(NULL::${table}, $${param}::json) WITH ORDINALITY AS r`;
  const list = (cs: string[]): string => cs.join(', ');
  const picked = (cs: string[]): string => cs.map((c) => `r.${c}`).join(', ');
  return `WITH k AS (
      INSERT INTO order_idempotency_keys (${list(cols.keys)})
      SELECT ${picked(cols.keys)} FROM ${from('order_idempotency_keys', 4)} ORDER BY r.ordinality
      ON CONFLICT (environment_id, idempotency_key) DO NOTHING
      RETURNING order_id),
    won AS (SELECT order_id AS id FROM k UNION ALL SELECT unnest($5::text[])),
    o AS (INSERT INTO orders (${list(cols.orders)})
      SELECT ${picked(cols.orders)} FROM ${from('orders', 1)} WHERE r.id IN (SELECT id FROM won) ORDER BY r.ordinality),
    ev AS (INSERT INTO events (${list(cols.events)})
      SELECT ${picked(cols.events)} FROM ${from('events', 2)} WHERE r.order_id IN (SELECT id FROM won) ORDER BY r.ordinality),
    d AS (INSERT INTO deliveries (${list(cols.deliveries)}, ${list(TARGET)})
      SELECT ${picked(cols.deliveries)}, ep.id, ep.version, ep.url
        FROM ${from('deliveries', 3)}
        JOIN webhook_endpoints ep ON ep.environment_id = r.environment_id AND ep.active = TRUE
       WHERE r.order_id IN (SELECT id FROM won) ORDER BY r.ordinality
      RETURNING order_id)
    SELECT (SELECT array_agg(id) FROM won) AS created, (SELECT array_agg(order_id) FROM d) AS delivered`;
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
export function bulkOrders(numbers: OrderNumbers, listeners: DeliveryListeners): Bulk<OrderCreation, OrderCreated> {
  // The mapping's columns, the same for every order: built from the first batch, prepared once
  // per connection (a named statement), then only bound.
  let text: string | null = null;
  return {
    async run(client: pg.PoolClient, items: readonly OrderCreation[]): Promise<Outcome<OrderCreated>[]> {
      const numbered = await Promise.all(items.map(async (c) => ({ ...c.order, orderNumber: formatOrderNumber(await numbers.next(c.order.environmentId)) })));
      const rows = items.map((c, i) => rowsOf(c, numbered[i]!.orderNumber));
      text ??= statement(rows[0]!);
      const r = await client.query<{ created: string[] | null; delivered: string[] | null }>({
        name: 'bulk-orders',
        text,
        values: [
          JSON.stringify(rows.map((x) => x.order)),
          JSON.stringify(rows.map((x) => x.event)),
          JSON.stringify(rows.map((x) => x.delivery)),
          JSON.stringify(rows.flatMap((x) => (x.key === null ? [] : [x.key]))),
          items.filter((c) => c.idempotency === null).map((c) => c.order.id),
        ],
      });
      const created = new Set(r.rows[0]?.created ?? []);
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
