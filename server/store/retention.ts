// Pruning expired rows (Store.prune), written once for both stores over the repositories' Sql.
// Every statement is bounded: a batch reads a window of at most `limit` rows in seq order per
// environment (the index on (environment_id, seq)), never a whole table, so a call costs the
// same on a database of a day or of a year and the writer is held only briefly.
//
// Within an environment seq follows insertion, hence created_at, so the expired rows come
// first: a window's expired rows are removed up to the last of them (seq <= boundary), which
// skips the rows still pending or still referenced. Rows of the other environment kind are
// untouched (each environment has its own cutoff).
import type { EnvironmentName, Millis } from '../domain/model.ts';
import type { Sql } from './sql.ts';
import type { PruneRequest, PruneResult } from '../domain/store.ts';

/** How a dialect removes a batch of expired idempotency keys ($1 cutoff, $2 limit): the table has no seq. */
export type KeyBatch = string;

interface WindowRow {
  seq: number | string;
  created_at: number | string;
}

/** The seq up to which the window's rows are expired (the last expired one), or null when none is. */
function boundary(rows: readonly WindowRow[], cutoff: Millis): number | null {
  let last: number | null = null;
  for (const r of rows) if (Number(r.created_at) < cutoff) last = Number(r.seq);
  return last;
}

// Deliveries that are no longer pending: a pending one is still being retried.
const DELIVERY_WINDOW = `SELECT seq, created_at FROM deliveries WHERE environment_id = $1 AND state <> 'pending' ORDER BY seq LIMIT $2`;
const EXPIRED_DELIVERIES = `SELECT id FROM deliveries WHERE environment_id = $1 AND seq <= $2 AND created_at < $3 AND state <> 'pending'`;
// A delivery disabled while in flight may still hold a lease (its holder records the attempt).
const DELETE_LEASES = `DELETE FROM delivery_leases WHERE delivery_seq IN (SELECT seq FROM deliveries WHERE environment_id = $1 AND seq <= $2 AND created_at < $3 AND state <> 'pending')`;
const DELETE_ATTEMPTS = `DELETE FROM delivery_attempts WHERE delivery_id IN (${EXPIRED_DELIVERIES})`;
const DELETE_DELIVERIES = `DELETE FROM deliveries WHERE environment_id = $1 AND seq <= $2 AND created_at < $3 AND state <> 'pending'`;

// Events that no delivery refers to any more (a pending delivery keeps its event). A scalar
// subquery, not NOT EXISTS: PostgreSQL turned NOT EXISTS into a hash anti-join that read every
// delivery of the table per batch (EXPLAIN, 26 000 deliveries: 14-29 ms, growing with the
// table); the subquery is one probe of deliveries_event per event of the window (1.7 ms).
const EVENT_WINDOW = `SELECT seq, created_at FROM events WHERE environment_id = $1 ORDER BY seq LIMIT $2`;
const DELETE_EVENTS = `DELETE FROM events WHERE environment_id = $1 AND seq <= $2 AND created_at < $3
  AND (SELECT count(*) FROM deliveries d WHERE d.event_id = events.id) = 0`;

const OLDEST_EVENT = 'SELECT created_at FROM events ORDER BY seq LIMIT 1';
const OLDEST_DELIVERY = 'SELECT created_at FROM deliveries ORDER BY seq LIMIT 1';

/** One batch of Store.prune inside the caller's transaction. */
export async function pruneBatch<B, J>(sql: Sql<B, J>, keyBatch: KeyBatch, req: PruneRequest): Promise<PruneResult> {
  if (!Number.isInteger(req.limit) || req.limit < 1) throw new RangeError(`prune limit must be a whole number >= 1, not ${req.limit}`);
  const deleted = { events: 0, deliveries: 0, attempts: 0, idempotencyKeys: 0 };
  let more = false;
  const environments = await sql.rows<{ id: string; name: EnvironmentName }>('SELECT id, name FROM environments ORDER BY id', []);
  for (const env of environments) {
    const cutoff = req.activityBefore[env.name];
    const deliveryRoom = req.limit - deleted.deliveries;
    if (deliveryRoom > 0) {
      const last = boundary(await sql.rows<WindowRow>(DELIVERY_WINDOW, [env.id, deliveryRoom]), cutoff);
      if (last !== null) {
        const params = [env.id, last, cutoff];
        await sql.run(DELETE_LEASES, params);
        deleted.attempts += await sql.run(DELETE_ATTEMPTS, params);
        const n = await sql.run(DELETE_DELIVERIES, params);
        deleted.deliveries += n;
        if (n >= deliveryRoom) more = true;
      }
    } else more = true;
    const eventRoom = req.limit - deleted.events;
    if (eventRoom > 0) {
      const window = await sql.rows<WindowRow>(EVENT_WINDOW, [env.id, eventRoom]);
      const last = boundary(window, cutoff);
      if (last !== null) {
        deleted.events += await sql.run(DELETE_EVENTS, [env.id, last, cutoff]);
        // A full window of expired rows may have more behind it.
        if (window.length === eventRoom && Number(window[window.length - 1]?.created_at) < cutoff) more = true;
      }
    } else more = true;
  }
  deleted.idempotencyKeys = await sql.run(keyBatch, [req.keysBefore, req.limit]);
  if (deleted.idempotencyKeys >= req.limit) more = true;
  const oldestOf = async (text: string): Promise<Millis | null> => {
    const r = await sql.one<{ created_at: number | string }>(text, []);
    return r === undefined ? null : Number(r.created_at);
  };
  return { ran: true, deleted, more, oldest: { events: await oldestOf(OLDEST_EVENT), deliveries: await oldestOf(OLDEST_DELIVERY) } };
}
