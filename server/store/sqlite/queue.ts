// The delivery queue on SQLite. Each operation is synchronous and runs as one unit of the
// store's group commit (group-commit.ts): claims and batches of completions share commits
// (and fsyncs) with each other and with the domain's transactions. Every update that moves a
// leased delivery on is guarded by the lease holder.
import type { AttemptResult, ClaimOptions, ClaimedDelivery, CompleteAndClaim, Completion } from '../types.ts';
import type { Db } from './db.ts';
import type { ClaimedRow } from '../rows.ts';
import { insertSql, mapping } from './rows.ts';
import { keepPlan } from './sql.ts';

// Every statement binds its parameters as +@name / +? (keepPlan, sql.ts): SQLite re-planned
// the claim (LIMIT @limit, `next_attempt_at <= @now`) and the completion (`@x IS NULL`) on every
// call otherwise. Measured on the store alone (one destination, 10 000 pending, 64 live
// leases): the claim's first step ≈ 270 µs with a re-plan and a row-constructor compilation
// per call, ≈ 140 µs without.

// Destination of a delivery: its endpoint, or its url for payout callbacks.
const DEST = "CASE WHEN endpoint_id IS NOT NULL THEN 'e:' || endpoint_id ELSE 'u:' || url END";

// The due, unleased deliveries of one destination (`dest`, an outer column), oldest first.
const dueOf = (dest: string, limit: string): string => `
  SELECT seq FROM deliveries
   WHERE state = 'pending' AND ${DEST} = ${dest} AND next_attempt_at <= @now
     AND (lease_owner IS NULL OR lease_expires_at <= @now)
   ORDER BY next_attempt_at LIMIT ${limit}`;

// Due, unleased (or lease expired) pending deliveries, oldest due first, at most
// perEndpointLimit minus the live leases per destination; with @exclusive, destinations on
// which another owner holds a live lease are skipped. Two steps, each bounded whatever the
// backlog: PICK reads a window of @scan rows in due order (the common case: the oldest due
// deliveries can be taken); when that does not fill the claim, PICK_BY_DESTINATION steps
// through the destinations that have pending deliveries (a loose scan of
// deliveries_destination_due) and takes at most the room left of each, so a destination at
// its limit with a backlog of a million costs one index step, not a million rows. With @slots
// (ClaimOptions.spread; NULL: unbounded), destinations @owner holds no lease on are taken
// earliest due first only until they cover @slots send slots at @perDestination each at most.
const PICK = keepPlan(`
  WITH live AS (
    SELECT ${DEST} AS dest, COUNT(*) AS n, MAX(lease_owner <> @owner) AS foreign_owner, MAX(lease_owner = @owner) AS mine FROM deliveries
     WHERE lease_owner IS NOT NULL AND lease_expires_at > @now
     GROUP BY dest
  ), head AS (
    SELECT seq, next_attempt_at, ${DEST} AS dest
      FROM deliveries
     WHERE state = 'pending' AND next_attempt_at <= @now
       AND (lease_owner IS NULL OR lease_expires_at <= @now)
     ORDER BY next_attempt_at
     LIMIT @scan
  ), candidates AS (
    SELECT * FROM head
     WHERE dest NOT IN (SELECT dest FROM live WHERE n >= @perEndpointLimit OR (@exclusive AND foreign_owner))
  ), due AS (
    SELECT seq, next_attempt_at, dest,
           ROW_NUMBER() OVER (PARTITION BY dest ORDER BY next_attempt_at, seq) AS rank,
           COUNT(*) OVER (PARTITION BY dest) AS n
      FROM candidates
  ), fresh AS (
    SELECT dest FROM (
      SELECT due.dest,
             COALESCE(SUM(MIN(due.n, @perDestination)) OVER (ORDER BY due.next_attempt_at, due.seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
        FROM due LEFT JOIN live ON live.dest = due.dest
       WHERE due.rank = 1 AND NOT COALESCE(live.mine, 0)
    )
     WHERE @slots IS NULL OR before < @slots
  )
  SELECT due.seq FROM due LEFT JOIN live ON live.dest = due.dest
   WHERE due.rank + COALESCE(live.n, 0) <= @perEndpointLimit
     AND (COALESCE(live.mine, 0) OR due.dest IN (SELECT dest FROM fresh))
   ORDER BY due.next_attempt_at, due.seq
   LIMIT @limit`);

// The same spread in both steps: the second picks afresh (nothing is leased in between).
const PICK_BY_DESTINATION = keepPlan(`
  WITH RECURSIVE dests(dest) AS (
    SELECT (SELECT ${DEST} FROM deliveries WHERE state = 'pending' ORDER BY ${DEST} LIMIT 1)
    UNION ALL
    SELECT (SELECT ${DEST} FROM deliveries WHERE state = 'pending' AND ${DEST} > dests.dest ORDER BY ${DEST} LIMIT 1)
      FROM dests WHERE dests.dest IS NOT NULL
  ), live AS (
    SELECT ${DEST} AS dest, COUNT(*) AS n, MAX(lease_owner <> @owner) AS foreign_owner, MAX(lease_owner = @owner) AS mine FROM deliveries
     WHERE lease_owner IS NOT NULL AND lease_expires_at > @now
     GROUP BY dest
  ), open AS (
    SELECT dests.dest, @perEndpointLimit - COALESCE(live.n, 0) AS room, COALESCE(live.mine, 0) AS mine
      FROM dests LEFT JOIN live ON live.dest = dests.dest
     WHERE dests.dest IS NOT NULL AND COALESCE(live.n, 0) < @perEndpointLimit
       AND NOT (@exclusive AND COALESCE(live.foreign_owner, 0))
  ), ranked AS (
    SELECT d.seq, d.next_attempt_at, open.dest, open.room, open.mine,
           ROW_NUMBER() OVER (PARTITION BY open.dest ORDER BY d.next_attempt_at, d.seq) AS rank
      FROM open JOIN deliveries d ON d.seq IN (${dueOf('open.dest', '@perEndpointLimit')})
  ), due AS (
    SELECT *, COUNT(*) OVER (PARTITION BY dest) AS n FROM ranked WHERE rank <= room
  ), fresh AS (
    SELECT dest FROM (
      SELECT dest, COALESCE(SUM(MIN(n, @perDestination)) OVER (ORDER BY next_attempt_at, seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
        FROM due WHERE rank = 1 AND NOT mine
    )
     WHERE @slots IS NULL OR before < @slots
  )
  SELECT seq FROM due WHERE mine OR dest IN (SELECT dest FROM fresh) ORDER BY next_attempt_at, seq LIMIT @limit`);

// A claim that may not spread (spread.slots 0) only tops up the destinations @owner holds
// alone: one index step per held destination, at most the room left of each and the claim's
// limit. PICK's window would mostly hold other destinations' deliveries (those this owner
// leaves to others come first in due order), and PICK_BY_DESTINATION steps through every
// destination with pending deliveries.
const PICK_HELD = keepPlan(`
  WITH live AS (
    SELECT ${DEST} AS dest, COUNT(*) AS n FROM deliveries
     WHERE lease_owner IS NOT NULL AND lease_expires_at > @now
     GROUP BY dest
    HAVING MIN(lease_owner = @owner)
  ), due AS (
    SELECT d.seq, d.next_attempt_at, live.n,
           ROW_NUMBER() OVER (PARTITION BY live.dest ORDER BY d.next_attempt_at, d.seq) AS rank
      FROM live JOIN deliveries d ON d.seq IN (${dueOf('live.dest', '@limit')})
     WHERE live.n < @perEndpointLimit
  )
  SELECT seq FROM due WHERE rank + n <= @perEndpointLimit ORDER BY next_attempt_at, seq LIMIT @limit`);

const LEASE = keepPlan('UPDATE deliveries SET lease_owner = ?, lease_expires_at = ? WHERE seq IN (SELECT value FROM json_each(?))');

// Everything an attempt needs, for the whole batch in one read: the delivery, its event and
// the sealed secret to sign with.
const CLAIMED = keepPlan(`
  SELECT d.*, CASE WHEN d.endpoint_id IS NOT NULL THEN w.secret_enc ELSE env.callback_secret_enc END AS secret_enc,
         e.id AS e_id, e.environment_id AS e_environment_id, e.type AS e_type, e.payload AS e_payload,
         e.order_id AS e_order_id, e.merchant_reference AS e_merchant_reference,
         e.transaction_id AS e_transaction_id, e.created_at AS e_created_at
    FROM deliveries d
    JOIN events e ON e.id = d.event_id
    JOIN environments env ON env.id = d.environment_id
    LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
   WHERE d.seq IN (SELECT value FROM json_each(?))
   ORDER BY d.next_attempt_at, d.seq`);

export function claim(db: Db, o: ClaimOptions): ClaimedDelivery[] {
  if (o.limit < 1 || o.perEndpointLimit < 1) return [];
  const scan = Math.max(64, o.limit * 2);
  const spread = { slots: o.spread?.slots ?? null, perDestination: o.spread?.perDestination ?? 1 };
  const params = { owner: o.owner, exclusive: o.exclusive ? 1 : 0, now: o.now, perEndpointLimit: o.perEndpointLimit, limit: o.limit, scan, ...spread };
  if (o.spread?.slots === 0) return lease(db, o, db.all<{ seq: number }>(PICK_HELD, params).map((r) => r.seq));
  let seqs = db.all<{ seq: number }>(PICK, params).map((r) => r.seq);
  if (seqs.length < o.limit) {
    // The window did not fill the claim: maybe because destinations at their limit fill it.
    // Nothing is leased yet: this step picks afresh, under the same spread.
    seqs = db.all<{ seq: number }>(PICK_BY_DESTINATION, params).map((r) => r.seq);
  }
  return lease(db, o, seqs);
}

/** Leases the picked deliveries and reads them back with their event and secret. */
function lease(db: Db, o: ClaimOptions, seqs: number[]): ClaimedDelivery[] {
  if (seqs.length === 0) return [];
  const list = JSON.stringify(seqs);
  db.run(LEASE, o.owner, o.now + o.leaseMs, list);
  const rows = db.all<ClaimedRow>(CLAIMED, list);
  if (rows.length !== seqs.length) throw new Error(`claimed ${seqs.length} deliveries but read ${rows.length} back`);
  return rows.map(mapping.claimedFromRow);
}

// Moves a delivery on only while `owner` holds the lease (and, for completeMany, that very
// lease). A delivery disabled while in flight (endpoint edited or disabled) keeps its state;
// the attempt is stored all the same.
const MOVE_ON = keepPlan(`
  UPDATE deliveries
     SET attempt_count = @number,
         state = CASE WHEN state = 'disabled' THEN state ELSE @state END,
         next_attempt_at = CASE WHEN state = 'disabled' THEN next_attempt_at ELSE @nextAttemptAt END,
         delivered_at = CASE WHEN state = 'disabled' THEN delivered_at ELSE @deliveredAt END,
         lease_owner = NULL, lease_expires_at = NULL, updated_at = @updatedAt
   WHERE id = @id AND lease_owner = @owner AND (@leaseExpiresAt IS NULL OR lease_expires_at = @leaseExpiresAt)`);

function completeOne(db: Db, owner: string, deliveryId: string, leaseExpiresAt: number | null, result: AttemptResult): boolean {
  if (result.attempt.deliveryId !== deliveryId) throw new Error(`attempt belongs to ${result.attempt.deliveryId}, not ${deliveryId}`);
  const a = result.attempt;
  const changed = db.run(MOVE_ON, {
    id: deliveryId,
    owner,
    leaseExpiresAt,
    number: a.number,
    state: result.state,
    nextAttemptAt: result.nextAttemptAt,
    deliveredAt: result.deliveredAt,
    updatedAt: a.startedAt + a.durationMs,
  }).changes;
  if (changed === 0) return false;
  const attemptRow = mapping.attemptToRow(a);
  db.run(insertSql('delivery_attempts', attemptRow), attemptRow);
  return true;
}

export function complete(db: Db, owner: string, deliveryId: string, result: AttemptResult): boolean {
  return completeOne(db, owner, deliveryId, null, result);
}

// One prepared statement per delivery: measured on this machine, a set-based UPDATE … FROM
// json_each(batch) costs more per row (≈ 9 µs against ≈ 5 µs); the rest of a completion's
// cost is index upkeep, the same either way.
export function completeMany(db: Db, owner: string, completions: readonly Completion[]): boolean[] {
  return completions.map((c) => completeOne(db, owner, c.deliveryId, c.leaseExpiresAt, c.result));
}

export function completeAndClaim(db: Db, owner: string, completions: readonly Completion[], options: ClaimOptions | null): CompleteAndClaim {
  const applied = completeMany(db, owner, completions);
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

const RELEASE = keepPlan('UPDATE deliveries SET lease_owner = NULL, lease_expires_at = NULL WHERE id = ? AND lease_owner = ?');

/** Returns how many leases were given back. */
export function release(db: Db, owner: string, deliveryIds: readonly string[]): number {
  const stmt = db.statement(RELEASE);
  let released = 0;
  for (const id of deliveryIds) released += stmt.run(id, owner).changes;
  return released;
}

export function nextDueAt(db: Db): number | null {
  // Two index walks that stop at their first row, instead of reading every pending delivery:
  // the earliest unleased one (deliveries_due), and the earliest lease to expire
  // (deliveries_leased). A leased delivery's due time is at least its lease's end; using the
  // lease end alone can only wake the worker early, never late.
  const r = db.get<{ due: number | null }>(
    `SELECT MIN(due) AS due FROM (
       SELECT * FROM (SELECT next_attempt_at AS due FROM deliveries
          WHERE state = 'pending' AND next_attempt_at IS NOT NULL AND lease_owner IS NULL
          ORDER BY next_attempt_at LIMIT 1)
       UNION ALL
       SELECT * FROM (SELECT lease_expires_at AS due FROM deliveries
          WHERE lease_owner IS NOT NULL AND state = 'pending' AND next_attempt_at IS NOT NULL
          ORDER BY lease_expires_at LIMIT 1))`,
  );
  return r?.due ?? null;
}
