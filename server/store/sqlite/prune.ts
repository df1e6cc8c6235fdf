// What a pruning batch (../retention.ts) says in SQLite's dialect.
import type { PruneDialect } from '../retention.ts';

export const sqlitePrune: PruneDialect = {
  // The first `limit` keys in rowid (insertion) order, of which the expired ones: a bounded read.
  keyBatch: `DELETE FROM order_idempotency_keys WHERE rowid IN (
  SELECT k FROM (SELECT rowid AS k, created_at FROM order_idempotency_keys ORDER BY rowid LIMIT $2) WHERE created_at < $1)`,
  // No LATERAL: each environment's window is an IN subquery on seq (the rowid), read per environment.
  windows: (table, filter) => `SELECT w.environment_id, w.seq, w.created_at FROM json_each($1) AS e
  JOIN ${table} w ON w.seq IN (SELECT seq FROM ${table} WHERE environment_id = e.value${filter} ORDER BY seq LIMIT $2)`,
  inList: (column, n) => `${column} IN (SELECT value FROM json_each($${n}))`,
  list: (values) => JSON.stringify(values),
};
