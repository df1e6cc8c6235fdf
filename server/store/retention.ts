// Pruning expired rows (Store.prune), written once for both stores over the repositories' Sql.
// A batch runs a fixed number of statements, whatever the number of environments: it takes the
// next ENVIRONMENTS_PER_BATCH environments after a cursor kept in the database (the prune_cursor
// row, migration 0012: read and moved in the batch's own transaction, so a lap survives a
// restart and every instance of one database shares it: round-robin), finds
// in one statement which of them have expired rows (one index probe per table each), and shares
// its row budget (`limit` per table) among those: each reads a window of its first rows in seq
// order (the index on (environment_id, seq)), all of them in one statement, and the expired rows
// of the windows go in one statement per table. So a batch at 10 000 environments runs the
// statements of a batch at one, and no environment waits behind another's backlog: each gets its
// share on every lap. A pass ends at the end of a lap (the cursor back at the first environment)
// that left nothing expired behind; a pass cut short resumes where it stopped, so every
// environment is visited within two passes.
//
// Within an environment seq follows insertion, hence created_at, so the expired rows come first:
// the window of an environment that has any starts with them. Rows of the other environment kind are untouched
// (each environment has its own cutoff). An event's window holds only events no delivery refers
// to: one that a pending delivery still needs (a recovery re-queued it) is skipped, not a stop
// that every lap looks at while the environment's other expired events wait behind it.
import type { EnvironmentName, Millis } from '../domain/model.ts';
import type { PruneRequest, PruneResult } from '../domain/store.ts';
import type { Sql } from './sql.ts';

/** Environments a batch looks at, at most: its first statement probes each of them (two index probes). */
export const ENVIRONMENTS_PER_BATCH = 1000;

/** What differs by dialect in a batch. */
export interface PruneDialect {
  /** Removes a batch of expired idempotency keys ($1 cutoff, $2 limit): the table has no seq. */
  keyBatch: string;
  /**
   * environment_id, seq, created_at of the first $2 rows in seq order of `table` (`filter`: an
   * extra condition) for each environment of the list $1.
   */
  windows(table: 'deliveries' | 'events', filter: string): string;
  /** The condition "column is one of the list bound as $n". */
  inList(column: string, n: number): string;
  /** A list bound as one parameter. */
  list(values: readonly (string | number)[]): unknown;
}

/** Where the round-robin over environments stands: the prune_cursor row, read and moved by each batch. */
export interface PruneCursor {
  /** The last environment id of the previous batch ('' at the start of a lap). */
  after: string;
  /** A batch of this lap left expired rows behind: the pass goes on for another lap. */
  dirty: boolean;
}

export const LAP_START: PruneCursor = { after: '', dirty: false };

interface SliceRow {
  id: string;
  name: EnvironmentName;
  delivery: number | string | null;
  event: number | string | null;
}

interface WindowRow {
  environment_id: string;
  seq: number | string;
  created_at: number | string;
}

// The oldest row of each table per environment (a delivery still pending is being retried).
const SLICE = `SELECT e.id, e.name,
  (SELECT d.created_at FROM deliveries d WHERE d.environment_id = e.id AND d.state <> 'pending' ORDER BY d.seq LIMIT 1) AS delivery,
  (SELECT v.created_at FROM events v WHERE v.environment_id = e.id ORDER BY v.seq LIMIT 1) AS event
  FROM environments e WHERE e.id > $1 ORDER BY e.id LIMIT $2`;

// A delivery disabled while in flight may still hold a lease (its holder records the attempt).
const doneDeliveries = (d: PruneDialect): string => `SELECT seq FROM deliveries WHERE ${d.inList('seq', 1)} AND state <> 'pending'`;
const deleteLeases = (d: PruneDialect): string => `DELETE FROM delivery_leases WHERE delivery_seq IN (${doneDeliveries(d)})`;
const deleteAttempts = (d: PruneDialect): string =>
  `DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE ${d.inList('seq', 1)} AND state <> 'pending')`;
const deleteDeliveries = (d: PruneDialect): string => `DELETE FROM deliveries WHERE ${d.inList('seq', 1)} AND state <> 'pending'`;
// Events that no delivery refers to any more (a pending delivery keeps its event). A scalar
// subquery, not NOT EXISTS: PostgreSQL turned NOT EXISTS into a hash anti-join that read every
// delivery of the table per batch (EXPLAIN, 26 000 deliveries: 14-29 ms, growing with the
// table); the subquery is one probe of deliveries_event per event (1.7 ms).
const deleteEvents = (d: PruneDialect): string =>
  `DELETE FROM events WHERE ${d.inList('seq', 1)} AND (SELECT count(*) FROM deliveries x WHERE x.event_id = events.id) = 0`;

// The events' window filter: events no delivery refers to (the condition of deleteEvents, the
// same one probe of deliveries_event per event), older than the latest of the cutoffs, so that
// skipping the kept ones reads at most the expired rows of the environment, never its recent ones.
const EVENTS_NOBODY_NEEDS = ' AND created_at < $3 AND (SELECT count(*) FROM deliveries x WHERE x.event_id = events.id) = 0';

const READ_CURSOR = 'SELECT after_id, dirty FROM prune_cursor WHERE id = 1';
const MOVE_CURSOR = 'UPDATE prune_cursor SET after_id = $1, dirty = $2 WHERE id = 1';

const OLDEST = `SELECT (SELECT created_at FROM events ORDER BY seq LIMIT 1) AS events,
  (SELECT created_at FROM deliveries ORDER BY seq LIMIT 1) AS deliveries`;

/** The round-robin's place as the database holds it (LAP_START before the row exists: a store not migrated yet). */
async function readCursor<B, J>(sql: Sql<B, J>): Promise<PruneCursor> {
  const row = await sql.one<{ after_id: string; dirty: number | string }>(READ_CURSOR, []);
  return row ? { after: row.after_id, dirty: Number(row.dirty) === 1 } : LAP_START;
}

/**
 * One batch of Store.prune inside the caller's transaction (on PostgreSQL under the pruner's
 * advisory lock): it reads the cursor, and moves it in the same transaction, so the round-robin
 * moves only when the batch commits. `next` is where it now stands.
 */
export async function pruneBatch<B, J>(sql: Sql<B, J>, dialect: PruneDialect, req: PruneRequest): Promise<{ result: PruneResult; next: PruneCursor }> {
  if (!Number.isInteger(req.limit) || req.limit < 1) throw new RangeError(`prune limit must be a whole number >= 1, not ${req.limit}`);
  const cursor = await readCursor(sql);
  const slice = await sql.rows<SliceRow>(SLICE, [cursor.after, ENVIRONMENTS_PER_BATCH]);
  const taken = takeSlice(slice, req);
  const cutoffs = new Map(taken.map((e) => [e.id, req.activityBefore[e.name]]));
  const deliveries = await pruneTable(sql, dialect, 'deliveries', candidates(taken, 'delivery', req), cutoffs, req.limit);
  const events = await pruneTable(sql, dialect, 'events', candidates(taken, 'event', req), cutoffs, req.limit);
  const idempotencyKeys = await sql.run(dialect.keyBatch, [req.keysBefore, req.limit]);
  // A full window of expired rows may have more behind it; one whose rows could not go (events a
  // pending delivery keeps) is no reason for another lap.
  const dirty = cursor.dirty || deliveries.full || (events.full && events.deleted > 0);
  const lapEnds = taken.length === slice.length && slice.length < ENVIRONMENTS_PER_BATCH;
  const next: PruneCursor = lapEnds ? LAP_START : { after: taken.at(-1)?.id ?? cursor.after, dirty };
  await sql.run(MOVE_CURSOR, [next.after, next.dirty ? 1 : 0]);
  const more = (lapEnds ? dirty : true) || idempotencyKeys >= req.limit;
  const oldest = await sql.one<{ events: number | string | null; deliveries: number | string | null }>(OLDEST, []);
  const millis = (v: number | string | null | undefined): Millis | null => (v === null || v === undefined ? null : Number(v));
  const result: PruneResult = {
    ran: true,
    deleted: { events: events.deleted, deliveries: deliveries.deleted, attempts: deliveries.attempts, idempotencyKeys },
    more,
    oldest: { events: millis(oldest?.events), deliveries: millis(oldest?.deliveries) },
  };
  return { result, next };
}

/** Whether the environment's oldest row of the table (its probe) is expired. */
function expired(row: SliceRow, table: 'delivery' | 'event', req: PruneRequest): boolean {
  const oldest = row[table];
  return oldest !== null && Number(oldest) < req.activityBefore[row.name];
}

const candidates = (rows: readonly SliceRow[], table: 'delivery' | 'event', req: PruneRequest): string[] => rows.filter((r) => expired(r, table, req)).map((r) => r.id);

/** The slice's longest prefix in which neither table has more environments with expired rows than `limit` (each gets one row at least). */
function takeSlice(slice: readonly SliceRow[], req: PruneRequest): SliceRow[] {
  let d = 0;
  let e = 0;
  for (const [i, row] of slice.entries()) {
    d += expired(row, 'delivery', req) ? 1 : 0;
    e += expired(row, 'event', req) ? 1 : 0;
    if (d > req.limit || e > req.limit) return slice.slice(0, i);
  }
  return [...slice];
}

interface TableOutcome {
  deleted: number;
  attempts: number;
  /** An environment's window was full and all expired. */
  full: boolean;
}

/** The expired rows of each environment's window, the budget shared among the environments. */
async function pruneTable<B, J>(
  sql: Sql<B, J>,
  dialect: PruneDialect,
  table: 'deliveries' | 'events',
  environments: readonly string[],
  cutoffs: ReadonlyMap<string, Millis>,
  limit: number,
): Promise<TableOutcome> {
  if (environments.length === 0) return { deleted: 0, attempts: 0, full: false };
  const share = Math.max(1, Math.floor(limit / environments.length));
  const filter = table === 'deliveries' ? ` AND state <> 'pending'` : EVENTS_NOBODY_NEEDS;
  // $3 (the events' filter): the latest of the environments' cutoffs.
  const rows = await sql.rows<WindowRow>(dialect.windows(table, filter), [dialect.list(environments), share, ...(table === 'events' ? [Math.ceil(Math.max(...cutoffs.values()))] : [])]);
  const { seqs, full } = expiredRows(rows, cutoffs, share);
  if (seqs.length === 0) return { deleted: 0, attempts: 0, full };
  const list = [dialect.list(seqs)];
  if (table === 'events') return { deleted: await sql.run(deleteEvents(dialect), list), attempts: 0, full };
  await sql.run(deleteLeases(dialect), list);
  const attempts = await sql.run(deleteAttempts(dialect), list);
  return { deleted: await sql.run(deleteDeliveries(dialect), list), attempts, full };
}

/** The seqs of the windows' expired rows, and whether a window of `share` rows ends in an expired one (more may follow). */
function expiredRows(rows: readonly WindowRow[], cutoffs: ReadonlyMap<string, Millis>, share: number): { seqs: number[]; full: boolean } {
  const byEnvironment = new Map<string, WindowRow[]>();
  for (const r of rows) {
    const window = byEnvironment.get(r.environment_id);
    if (window === undefined) byEnvironment.set(r.environment_id, [r]);
    else window.push(r);
  }
  const seqs: number[] = [];
  let full = false;
  for (const [id, window] of byEnvironment) {
    const cutoff = cutoffs.get(id) ?? -Infinity;
    const isExpired = (r: WindowRow): boolean => Number(r.created_at) < cutoff;
    for (const r of window) if (isExpired(r)) seqs.push(Number(r.seq));
    const last = window.reduce((a, b) => (Number(b.seq) > Number(a.seq) ? b : a));
    if (window.length === share && isExpired(last)) full = true;
  }
  return { seqs, full };
}
