// Store.prune on PostgreSQL: one batch (../retention.ts) in a short transaction of its own,
// under a transaction-scoped advisory lock taken without waiting, so one instance prunes at a
// time and the others skip their turn (ran: false) instead of deleting the same rows.
//
// A batch is background work: with req.statementMs (PRUNE_STATEMENT_TIMEOUT) its statements
// get that statement_timeout (SET LOCAL: the transaction's only, the pooled session keeps the
// API's 2 s) and a client-side deadline the same QUERY_MARGIN_MS past it, so a slow batch on a
// large table is neither cancelled by the API's bound nor has its socket destroyed first.
import type pg from 'pg';
import { pruneBatch, type PruneDialect } from '../retention.ts';
import type { PruneRequest, PruneResult } from '../../domain/store.ts';
import { Conn, mapError } from './db.ts';
import { QUERY_MARGIN_MS, withDeadline } from './deadlines.ts';
import { postgresSql } from './sql.ts';

/** The advisory lock of the pruner (per database); the queue's claims use 7_270_002. */
export const PRUNE_LOCK = 7_270_042;

const postgresPrune: PruneDialect = {
  // The table has no seq: the oldest `limit` expired keys, through their created_at index (0008).
  keyBatch: `DELETE FROM order_idempotency_keys
  WHERE ctid = ANY (ARRAY(SELECT ctid FROM order_idempotency_keys WHERE created_at < $1 ORDER BY created_at LIMIT $2))`,
  // LATERAL: one index range of (environment_id, seq) per environment of the list.
  windows: (table, filter) => `SELECT e.id AS environment_id, w.seq, w.created_at FROM unnest($1::text[]) AS e(id)
  CROSS JOIN LATERAL (SELECT seq, created_at FROM ${table} WHERE environment_id = e.id${filter} ORDER BY seq LIMIT $2) w`,
  inList: (column, n) => `${column} = ANY($${n})`,
  list: (values) => [...values],
};

const SKIPPED: PruneResult = { ran: false, deleted: { events: 0, deliveries: 0, attempts: 0, idempotencyKeys: 0 }, more: false, oldest: { events: null, deliveries: null } };

/**
 * One batch from where the round-robin stands: the prune_cursor row (retention.ts), read and
 * moved under the lock in the batch's transaction, so every instance shares one lap.
 */
export async function prune(pool: pg.Pool, req: PruneRequest): Promise<PruneResult> {
  const client = await pool.connect();
  try {
    const ms = req.statementMs;
    return await (ms === undefined ? batch(client, req) : withDeadline(client, ms + QUERY_MARGIN_MS, () => batch(client, req, ms)));
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw mapError(err);
  } finally {
    client.release();
  }
}

/** The batch's transaction; statementMs: its statement_timeout, when not the session's. */
async function batch(client: pg.PoolClient, req: PruneRequest, statementMs?: number): Promise<PruneResult> {
  await client.query('BEGIN');
  if (statementMs !== undefined) await client.query("SELECT set_config('statement_timeout', $1, true)", [String(statementMs)]);
  const lock = await client.query<{ got: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS got', [PRUNE_LOCK]);
  if (lock.rows[0]?.got !== true) {
    await client.query('ROLLBACK');
    return SKIPPED;
  }
  const { result } = await pruneBatch(postgresSql(new Conn(client)), postgresPrune, req);
  await client.query('COMMIT');
  return result;
}
