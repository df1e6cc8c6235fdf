// The delivery queue on SQLite: the shared statements of ../queue-sql.ts, run here. Each
// operation is synchronous and runs as one unit of the store's group commit (group-commit.ts):
// claims and batches of completions share commits (and fsyncs) with each other and with the
// domain's transactions. Every update that moves a
// leased delivery on is guarded by the lease holder.
import type { ClaimOptions, ClaimedDelivery, CompleteAndClaim, Completion, QueueStats } from '../../domain/store.ts';
import type { Db } from './db.ts';
import type { ClaimedRow } from '../rows.ts';
import { CLAIMED_COLUMNS, CLAIMED_JOINS, NEXT_DUE, PAUSE, STATS, claimSteps, claimStatements, type QueueDialect } from '../queue-sql.ts';
import { insertSql, mapping } from './rows.ts';
import { keepPlan } from './sql.ts';

// Every statement binds its parameters as +@name / +? (keepPlan, sql.ts): SQLite re-planned
// the claim (LIMIT @limit, `next_attempt_at <= @now`) and the completion on every call
// otherwise. Measured on the store alone (one destination, 10 000 pending, 64 live leases): the
// claim's first step ≈ 270 µs with a re-plan and a row-constructor compilation
// per call, ≈ 140 µs without.

const DIALECT: QueueDialect = {
  // No LATERAL: the subquery cannot see the outer row's room, so it reads up to `cap`.
  dueOf: (due, _room, cap) => `JOIN deliveries c ON c.seq IN (SELECT seq FROM (${due(cap)}))`,
  // No writes inside WITH: the picked seqs come back and lease() leases them.
  leasePicked: (full) => `SELECT seq, ${full} AS window_full FROM picked`,
  // Measured on the store alone: a window of twice the claim (at least 64 rows) is enough here.
  window: (limit) => Math.max(64, limit * 2),
  flag: (value) => (value ? 1 : 0),
};
const CLAIM = claimStatements(DIALECT);
const STEPS = { window: keepPlan(CLAIM.window), byDestination: keepPlan(CLAIM.byDestination), held: keepPlan(CLAIM.held) };

// A new lease, or an expired one taken over (the pick skipped live ones).
const LEASE = keepPlan(`
  INSERT INTO delivery_leases (delivery_seq, destination, owner, expires_at)
  SELECT seq, destination, @owner, @leaseEnd FROM deliveries WHERE seq IN (SELECT value FROM json_each(@seqs))
  ON CONFLICT (delivery_seq) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at`);

const CLAIMED = keepPlan(`
  SELECT d.*, ${CLAIMED_COLUMNS}
    FROM delivery_records d
    ${CLAIMED_JOINS}
   WHERE d.seq IN (SELECT value FROM json_each(?))
   ORDER BY d.next_attempt_at, d.seq`);

export function claim(db: Db, o: ClaimOptions): ClaimedDelivery[] {
  const steps = claimSteps(o, DIALECT);
  let step = steps.next({ rows: [], windowFull: false });
  while (!step.done) {
    const { text, params } = step.value;
    const picked = db.all<{ seq: number; window_full: number }>(STEPS[text], params);
    step = steps.next({ rows: lease(db, params, picked.map((r) => r.seq)), windowFull: picked[0]?.window_full === 1 });
  }
  return step.value.map(mapping.claimedFromRow);
}

/** Leases the picked deliveries and reads them back with their event and secret. */
function lease(db: Db, params: Record<string, unknown>, seqs: number[]): ClaimedRow[] {
  if (seqs.length === 0) return [];
  const list = JSON.stringify(seqs);
  db.run(LEASE, { owner: params.owner, leaseEnd: params.leaseEnd, seqs: list });
  const rows = db.all<ClaimedRow>(CLAIMED, list);
  if (rows.length !== seqs.length) throw new Error(`claimed ${seqs.length} deliveries but read ${rows.length} back`);
  return rows;
}

// A completion ends `owner`'s very lease (owner and lease end), then moves the delivery on; a
// lost lease writes nothing. A delivery disabled while in flight (endpoint edited or disabled)
// keeps its state; the attempt is stored all the same.
const END_LEASE = keepPlan(`
  DELETE FROM delivery_leases
   WHERE delivery_seq = (SELECT seq FROM deliveries WHERE id = @id) AND owner = @owner AND expires_at = @leaseExpiresAt
  RETURNING delivery_seq AS seq`);
const MOVE_ON = keepPlan(`
  UPDATE deliveries
     SET attempt_count = @number,
         state = CASE WHEN state = 'disabled' THEN state ELSE @state END,
         next_attempt_at = CASE WHEN state = 'disabled' THEN next_attempt_at ELSE @nextAttemptAt END,
         delivered_at = CASE WHEN state = 'disabled' THEN delivered_at ELSE @deliveredAt END,
         updated_at = @updatedAt
   WHERE seq = @seq`);

// One prepared statement of each per delivery: measured on this machine, a set-based UPDATE …
// FROM json_each(batch) costs more per row (≈ 9 µs against ≈ 5 µs); the rest of a completion's
// cost is index upkeep, the same either way.
function completeOne(db: Db, owner: string, c: Completion): boolean {
  const a = c.result.attempt;
  if (a.deliveryId !== c.deliveryId) throw new Error(`attempt belongs to ${a.deliveryId}, not ${c.deliveryId}`);
  const ended = db.get<{ seq: number }>(END_LEASE, { id: c.deliveryId, owner, leaseExpiresAt: c.leaseExpiresAt });
  if (ended === undefined) return false;
  db.run(MOVE_ON, {
    seq: ended.seq,
    number: a.number,
    state: c.result.state,
    nextAttemptAt: c.result.nextAttemptAt,
    deliveredAt: c.result.deliveredAt,
    updatedAt: a.startedAt + a.durationMs,
  });
  const attemptRow = mapping.attemptToRow(a);
  db.run(insertSql('delivery_attempts', attemptRow), attemptRow);
  return true;
}

export function completeAndClaim(db: Db, owner: string, completions: readonly Completion[], options: ClaimOptions | null): CompleteAndClaim {
  const applied = completions.map((c) => completeOne(db, owner, c));
  if (options === null) return { applied, claimed: [], claimError: null };
  // A savepoint of its own: a failing claim leaves no half-set lease and keeps the attempts.
  db.raw.exec('SAVEPOINT claim');
  try {
    const claimed = claim(db, options);
    db.raw.exec('RELEASE claim');
    return { applied, claimed, claimError: null };
  } catch (err) {
    if (!db.raw.inTransaction) throw err; // the whole transaction is gone: nothing stands
    db.raw.exec('ROLLBACK TO claim');
    db.raw.exec('RELEASE claim');
    return { applied, claimed: [], claimError: err instanceof Error ? err : new Error(String(err)) };
  }
}

const RELEASE = keepPlan('DELETE FROM delivery_leases WHERE delivery_seq = (SELECT seq FROM deliveries WHERE id = ?) AND owner = ?');

/** Returns how many leases were given back. */
export function release(db: Db, owner: string, deliveryIds: readonly string[]): number {
  const stmt = db.statement(RELEASE);
  let released = 0;
  for (const id of deliveryIds) released += stmt.run(id, owner).changes;
  return released;
}

/** Every lease given back (releaseOrphaned: the file's one owner is starting); how many. */
export function releaseAll(db: Db): number {
  return db.run('DELETE FROM delivery_leases').changes;
}

const PAUSE_SQLITE = keepPlan(PAUSE((a, b) => `MAX(${a}, ${b})`));

/** Holds a destination back until `until` (queue-sql.ts: PAUSE). */
export function pause(db: Db, destination: string, until: number): void {
  db.run(PAUSE_SQLITE, { destination, until });
}

export function nextDueAt(db: Db): number | null {
  return db.get<{ due: number | null }>(NEXT_DUE)?.due ?? null;
}

const QUEUE_STATS = keepPlan(STATS);

/** Pending deliveries by state at `now`, for the operator's metrics. */
export function stats(db: Db, now: number): QueueStats {
  const r = db.get<{ due: number | null; leased: number | null; waiting: number | null; oldest: number | null }>(QUEUE_STATS, { now });
  return { due: r?.due ?? 0, leased: r?.leased ?? 0, waiting: r?.waiting ?? 0, oldestDueAt: r?.oldest ?? null };
}
