// Store.createOrder for the orders a group-committed batch holds, together (a Bulk of
// group-commit.ts), as PostgreSQL's bulk-orders.ts does. Alone, an order is seven to nine
// statements (a savepoint, its number, its row, its event, the endpoint lookup, its deliveries,
// the release); here a batch's orders take one number update and one endpoints lookup per
// environment, the idempotency keys' lookup when any order has one, and one multi-row INSERT
// per table, each statement prepared once per connection and batch size. An order whose key
// is already taken (committed earlier, or by an earlier order of the same batch) writes
// nothing, and its caller reads the winner after the commit, as createOrderIn answers.
import type { OrderCreated, OrderCreation } from '../../domain/store.ts';
import type { TxScope } from '../tx.ts';
import { formatOrderNumber, idempotencyKeyRow } from '../repos/orders.ts';
import type { Bulk } from './group-commit.ts';
import type { Db } from './db.ts';
import { mapping as m } from './rows.ts';
import { MultiInsert, columnsOf } from './multi-insert.ts';
import { fanOutDeliveryId } from '../fan-out.ts';
import { receives } from '../../domain/model.ts';

/** One order of the batch, and the scope its caller settles at commit (wake-ups, event listeners). */
export interface BulkOrder {
  creation: OrderCreation;
  scope: TxScope;
}

interface Endpoint {
  id: string;
  version: number;
  url: string;
  event_types: string | null;
}

/** An active endpoint, with the event types it receives parsed once for the batch. */
type Target = Endpoint & { types: readonly string[] | null };

/** The bulk kind of new orders on one SQLite connection. */
export function sqliteBulkOrders(db: Db): Bulk<BulkOrder, OrderCreated> {
  let inserts: { orders: MultiInsert; events: MultiInsert; deliveries: MultiInsert; keys: MultiInsert } | null = null;
  return {
    run(items) {
      const winners = keyWinners(db, items);
      const numbers = numberBlocks(db, items, winners);
      const endpoints = activeEndpoints(db, items, winners);
      const orders: object[] = [];
      const events: object[] = [];
      const deliveries: object[] = [];
      const keys: object[] = [];
      const results = items.map(({ creation: c }, i): OrderCreated => {
        if (!winners[i]) return { created: false };
        const o = c.order;
        const order = { ...o, orderNumber: formatOrderNumber(numbers.next(o.environmentId)) };
        orders.push(m.orderToRow(order));
        events.push(m.eventToRow(c.event));
        // The fan-out (fan-out.ts): one delivery per active endpoint taking the event's type.
        const targets = (endpoints.get(o.environmentId) ?? []).filter((ep) => receives(ep.types, c.event.type));
        targets.forEach((ep, rank) => {
          const id = fanOutDeliveryId(c.delivery.id, ep.id, rank + 1);
          deliveries.push(m.deliveryToRow({ ...c.delivery, id, endpointId: ep.id, endpointVersion: ep.version, url: ep.url }));
        });
        if (c.idempotency !== null) keys.push(idempotencyKeyRow(o.environmentId, c.idempotency.key, { orderId: o.id, requestHash: c.idempotency.requestHash, createdAt: o.createdAt }));
        return { created: true, order, delivery: targets.length > 0 };
      });
      if (orders.length > 0) {
        inserts ??= {
          orders: new MultiInsert('orders', columnsOf(orders[0]!)),
          events: new MultiInsert('events', columnsOf(events[0]!)),
          deliveries: new MultiInsert('deliveries', columnsOf(m.deliveryToRow({ ...items[0]!.creation.delivery, endpointId: null, endpointVersion: null, url: '' }))),
          keys: new MultiInsert('order_idempotency_keys', columnsOf(idempotencyKeyRow('', '', { orderId: '', requestHash: '', createdAt: 0 }))),
        };
        // In the orders' order: events' seq follows it (the stream's order), and keys refer to orders.
        inserts.orders.run(db, orders);
        inserts.events.run(db, events);
        inserts.deliveries.run(db, deliveries);
        inserts.keys.run(db, keys);
      }
      noteWrites(items, results);
      return results;
    },
  };
}

/** Each created order's event (and delivery) on its caller's scope: only once every row is in, so a bulk write that throws announces nothing. */
function noteWrites(items: readonly BulkOrder[], results: readonly OrderCreated[]): void {
  results.forEach((r, i) => {
    if (!r.created) return;
    const scope = items[i]!.scope;
    (scope.eventEnvironments ??= new Set()).add(r.order.environmentId);
    if (r.delivery) scope.deliveriesReady = true;
  });
}

/** Whether each order may be created: its key, if any, is neither recorded nor taken by an earlier order of the batch. */
function keyWinners(db: Db, items: readonly BulkOrder[]): boolean[] {
  const keyed = items.filter((x) => x.creation.idempotency !== null);
  if (keyed.length === 0) return items.map(() => true);
  const pairs = keyed.map((x) => [x.creation.order.environmentId, x.creation.idempotency!.key] as const);
  const taken = new Set(
    db
      .all<{ environment_id: string; idempotency_key: string }>(
        `SELECT environment_id, idempotency_key FROM order_idempotency_keys WHERE (environment_id, idempotency_key) IN (VALUES ${pairs.map(() => '(?, ?)').join(', ')})`,
        ...pairs.flat(),
      )
      .map((r) => `${r.environment_id}\n${r.idempotency_key}`),
  );
  return items.map(({ creation: c }) => {
    if (c.idempotency === null) return true;
    const k = `${c.order.environmentId}\n${c.idempotency.key}`;
    if (taken.has(k)) return false;
    taken.add(k);
    return true;
  });
}

/** One number update per environment for the batch's new orders; `next` hands them out in order. */
function numberBlocks(db: Db, items: readonly BulkOrder[], winners: readonly boolean[]): { next(environmentId: string): number } {
  const counts = new Map<string, number>();
  items.forEach((x, i) => winners[i] && counts.set(x.creation.order.environmentId, (counts.get(x.creation.order.environmentId) ?? 0) + 1));
  const next = new Map<string, number>();
  for (const [environmentId, n] of counts) {
    const r = db.get<{ last_value: number }>(
      `INSERT INTO order_number_sequences (environment_id, last_value) VALUES (?, ?)
       ON CONFLICT (environment_id) DO UPDATE SET last_value = last_value + excluded.last_value
       RETURNING last_value`,
      environmentId,
      n,
    );
    if (!r) throw new Error('order number sequence returned no row');
    next.set(environmentId, r.last_value - n + 1);
  }
  return {
    next(environmentId) {
      const n = next.get(environmentId)!;
      next.set(environmentId, n + 1);
      return n;
    },
  };
}

/** Each environment's active endpoints by id, looked up once for the batch. */
function activeEndpoints(db: Db, items: readonly BulkOrder[], winners: readonly boolean[]): Map<string, Target[]> {
  const found = new Map<string, Target[]>();
  const seen = new Set<string>();
  items.forEach(({ creation: c }, i) => {
    const environmentId = c.order.environmentId;
    if (!winners[i] || seen.has(environmentId)) return;
    seen.add(environmentId);
    const eps = db.all<Endpoint>('SELECT id, version, url, event_types FROM webhook_endpoints WHERE environment_id = +? AND active = 1 ORDER BY id', environmentId);
    found.set(
      environmentId,
      eps.map((ep) => ({ ...ep, types: ep.event_types === null ? null : (JSON.parse(ep.event_types) as string[]) })),
    );
  });
  return found;
}
