// The delivery queue on PostgreSQL, shared by every instance. Each operation is one short
// database transaction on the pool; every update that moves a leased delivery on is guarded
// by the lease holder, and row locks settle races between instances.
import type pg from 'pg';
import type { AttemptResult, ClaimOptions, ClaimedDelivery, CompleteAndClaim, Completion } from '../types.ts';
import { Conn, mapError } from './db.ts';
import type { ClaimedRow } from '../rows.ts';
import { mapping, textSafe } from './rows.ts';

/**
 * Claims take this transaction-scoped advisory lock (per database) one at a time. SKIP LOCKED
 * alone would keep two claimers from leasing the same delivery, but both could count the same
 * live leases per destination and together go past perEndpointLimit. A claim is one statement,
 * so the wait is short.
 */
const CLAIM_LOCK = 7_270_002;

// The end of both claim statements: lock the picked deliveries (SKIP LOCKED: a row that a
// completion or a domain transaction is writing waits for the next claim instead of stalling
// this one; the lock re-checks the row's latest version, and `locked` returns that version),
// then lease them: a new lease row, or one that has expired taken over (ON CONFLICT re-checks
// the latest lease; a live one is left alone and its delivery not claimed).
const LEASE_PICKED = `locked AS (
    SELECT d.* FROM deliveries d
     WHERE d.seq IN (SELECT seq FROM picked)
       AND d.state = 'pending' AND d.next_attempt_at <= $1
       FOR UPDATE OF d SKIP LOCKED
  ), leased AS (
    INSERT INTO delivery_leases AS l (delivery_seq, destination, owner, expires_at)
    SELECT seq, destination, $5, $6 FROM locked
    ON CONFLICT (delivery_seq) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
     WHERE l.expires_at <= $1
    RETURNING l.delivery_seq, l.owner, l.expires_at
  )
  SELECT d.*, leased.owner AS lease_owner, leased.expires_at AS lease_expires_at,
         CASE WHEN d.endpoint_id IS NOT NULL THEN w.secret_enc ELSE env.callback_secret_enc END AS secret_enc,
         e.id AS e_id, e.environment_id AS e_environment_id, e.type AS e_type, e.payload AS e_payload,
         e.order_id AS e_order_id, e.merchant_reference AS e_merchant_reference,
         e.transaction_id AS e_transaction_id, e.created_at AS e_created_at
    FROM leased
    JOIN locked d ON d.seq = leased.delivery_seq
    JOIN events e ON e.id = d.event_id
    JOIN environments env ON env.id = d.environment_id
    LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
   ORDER BY d.next_attempt_at, d.seq`;

// Due, unleased (or lease expired) pending deliveries, oldest due first, at most
// perEndpointLimit minus the live leases per destination ($2); with $7 (exclusive),
// destinations on which another owner than $5 holds a live lease are skipped. The candidates are read in due
// order from the partial index and bounded ($3), skipping destinations already at their
// limit; when that does not fill the claim, CLAIM_BY_DESTINATION below takes over. With $8
// (spread slots; NULL: unbounded), destinations $5 holds no lease on are taken earliest due
// first only until they cover $8 send slots at $9 each at most (fresh). Then LEASE_PICKED.
const CLAIM = `
  WITH live AS (
    SELECT destination, count(*) AS n, bool_or(owner <> $5) AS foreign_owner, bool_or(owner = $5) AS mine FROM delivery_leases
     WHERE expires_at > $1
     GROUP BY destination
  ), candidates AS (
    SELECT d.seq, d.next_attempt_at, d.destination FROM deliveries d
     WHERE d.state = 'pending' AND d.next_attempt_at <= $1
       AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_seq = d.seq AND l.expires_at > $1)
       AND d.destination NOT IN (SELECT destination FROM live WHERE n >= $2 OR ($7::boolean AND foreign_owner))
     ORDER BY d.next_attempt_at, d.seq
     LIMIT $3
  ), ranked AS (
    SELECT seq, next_attempt_at, destination,
           row_number() OVER (PARTITION BY destination ORDER BY next_attempt_at, seq) AS rank,
           count(*) OVER (PARTITION BY destination) AS due
      FROM candidates
  ), fresh AS (
    SELECT destination FROM (
      SELECT r.destination,
             COALESCE(sum(LEAST(r.due, $9::bigint)) OVER (ORDER BY r.next_attempt_at, r.seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
        FROM ranked r LEFT JOIN live ON live.destination = r.destination
       WHERE r.rank = 1 AND NOT COALESCE(live.mine, false)
    ) f
     WHERE $8::bigint IS NULL OR f.before < $8::bigint
  ), picked AS (
    SELECT r.seq FROM ranked r LEFT JOIN live ON live.destination = r.destination
     WHERE r.rank + COALESCE(live.n, 0) <= $2
       AND (COALESCE(live.mine, false) OR r.destination IN (SELECT destination FROM fresh))
     ORDER BY r.next_attempt_at, r.seq
     LIMIT $4
  ), ${LEASE_PICKED}`;


// The due, unleased deliveries of one destination (`destination`, an outer column), oldest first.
const dueOf = (destination: string, limit: string): string => `
  SELECT d.seq, d.next_attempt_at FROM deliveries d
   WHERE d.state = 'pending' AND d.destination = ${destination} AND d.next_attempt_at <= $1
     AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_seq = d.seq AND l.expires_at > $1)
   ORDER BY d.next_attempt_at, d.seq
   LIMIT ${limit}`;

// The second step, when the window did not fill the claim: a loose scan of
// deliveries_destination_due, one index step per destination with pending deliveries and at
// most the room left of each, so a destination at its limit costs one step whatever its backlog.
// The spread as in CLAIM, $8 being what the first step left of it (slotsLeft).
const CLAIM_BY_DESTINATION = `
  WITH RECURSIVE dests AS (
    (SELECT destination FROM deliveries WHERE state = 'pending' ORDER BY destination LIMIT 1)
    UNION ALL
    SELECT (SELECT d.destination FROM deliveries d WHERE d.state = 'pending' AND d.destination > dests.destination
             ORDER BY d.destination LIMIT 1)
      FROM dests WHERE dests.destination IS NOT NULL
  ), live AS (
    SELECT destination, count(*) AS n, bool_or(owner <> $5) AS foreign_owner, bool_or(owner = $5) AS mine FROM delivery_leases
     WHERE expires_at > $1
     GROUP BY destination
  ), open AS (
    SELECT dests.destination, $2 - COALESCE(live.n, 0) AS room, COALESCE(live.mine, false) AS mine
      FROM dests LEFT JOIN live ON live.destination = dests.destination
     WHERE dests.destination IS NOT NULL AND COALESCE(live.n, 0) < $2
       AND NOT ($7::boolean AND COALESCE(live.foreign_owner, false))
  ), due AS (
    SELECT open.destination, open.mine, c.seq, c.next_attempt_at,
           row_number() OVER (PARTITION BY open.destination ORDER BY c.next_attempt_at, c.seq) AS rank,
           count(*) OVER (PARTITION BY open.destination) AS n
      FROM open CROSS JOIN LATERAL (${dueOf('open.destination', 'LEAST(open.room, $3)')}) c
  ), fresh AS (
    SELECT destination FROM (
      SELECT destination, COALESCE(sum(LEAST(n, $9::bigint)) OVER (ORDER BY next_attempt_at, seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
        FROM due WHERE rank = 1 AND NOT mine
    ) f
     WHERE $8::bigint IS NULL OR f.before < $8::bigint
  ), picked AS (
    SELECT seq FROM due WHERE mine OR destination IN (SELECT destination FROM fresh)
     ORDER BY next_attempt_at, seq
     LIMIT $4
  ), ${LEASE_PICKED}`;

/**
 * The spread (ClaimOptions.spread) left for the second step after the first leased deliveries
 * to `destinations` (one entry a delivery): each destination counts min(its deliveries,
 * perDestination) slots, also one the owner held already, so the second step spreads less than
 * it could, never more, and the next claim goes on from there.
 */
function slotsLeft(o: ClaimOptions, destinations: readonly string[]): number | null {
  if (o.spread === undefined) return null;
  const per = new Map<string, number>();
  for (const d of destinations) per.set(d, (per.get(d) ?? 0) + 1);
  let used = 0;
  for (const n of per.values()) used += Math.min(n, o.spread.perDestination);
  return Math.max(0, o.spread.slots - used);
}

// A claim that may not spread (spread.slots 0) only tops up the destinations $5 holds: one
// index step per held destination, at most the room left of each and the claim's limit ($3,
// $4). The window of CLAIM would mostly hold other destinations' deliveries (those this owner
// leaves to others come first in due order), and the loose scan of CLAIM_BY_DESTINATION would
// step through every destination with pending deliveries.
const CLAIM_HELD = `
  WITH live AS (
    SELECT destination, count(*) AS n FROM delivery_leases
     WHERE expires_at > $1
     GROUP BY destination
    HAVING bool_and(owner = $5)
  ), picked AS (
    SELECT c.seq FROM live CROSS JOIN LATERAL (${dueOf('live.destination', 'LEAST($2 - live.n, $3, $4)')}) c
     WHERE live.n < $2
     ORDER BY c.next_attempt_at, c.seq
     LIMIT $4
  ), ${LEASE_PICKED}`;

/** CLAIM, then CLAIM_BY_DESTINATION when the window did not fill the claim. */
async function claimSpreading(client: pg.PoolClient, o: ClaimOptions, scan: number): Promise<ClaimedRow[]> {
  let rows = (
    await client.query<ClaimedRow>({
      name: 'queue_claim',
      text: CLAIM,
      values: [o.now, o.perEndpointLimit, scan, o.limit, o.owner, o.now + o.leaseMs, o.exclusive === true, o.spread?.slots ?? null, o.spread?.perDestination ?? 1],
    })
  ).rows;
  if (rows.length < o.limit) {
    // Sees this transaction's leases: counts them, and never picks them again.
    const more = await client.query<ClaimedRow>({
      name: 'queue_claim_by_destination',
      text: CLAIM_BY_DESTINATION,
      values: [o.now, o.perEndpointLimit, o.perEndpointLimit, o.limit - rows.length, o.owner, o.now + o.leaseMs, o.exclusive === true, slotsLeft(o, rows.map((r) => r.endpoint_id ?? r.url)), o.spread?.perDestination ?? 1],
    });
    if (more.rows.length > 0) {
      rows = [...rows, ...more.rows].sort((x, y) => (x.next_attempt_at ?? 0) - (y.next_attempt_at ?? 0) || x.seq - y.seq);
    }
  }
  return rows;
}

export async function claim(pool: pg.Pool, o: ClaimOptions): Promise<ClaimedDelivery[]> {
  if (o.limit < 1 || o.perEndpointLimit < 1) return [];
  // The window of due rows the first step reads. Not scaled by perEndpointLimit: with a
  // prefetch of 256 per destination that made a window of 100 000 rows, and a backlog of
  // 100 000 drained at a quarter of the speed of one of 10 000. When the window does not fill
  // the claim (destinations at their limit fill it), the second step takes over.
  const scan = Math.max(200, o.limit * 4);
  const client = await pool.connect();
  let broken: Error | undefined;
  let rows: ClaimedRow[];
  try {
    // BEGIN and the lock in one round trip (a simple query of three statements); the claim is
    // its own statement: its snapshot must be taken after the lock, so it sees the leases the
    // previous claimer committed. Then COMMIT: three round trips per claimed batch.
    // The COMMIT does not wait for the WAL flush (synchronous_commit off, this transaction
    // only), so the claim lock is not held across a flush: a claim lost to a server crash only
    // loses leases (the deliveries are due again and sent again, as at-least-once allows), and
    // any later durable commit (a completion) flushes the WAL up to and past it.
    await client.query(`BEGIN; SET LOCAL synchronous_commit = off; SELECT pg_advisory_xact_lock(${CLAIM_LOCK})`);
    try {
      rows =
        o.spread?.slots === 0
          ? (await client.query<ClaimedRow>({ name: 'queue_claim_held', text: CLAIM_HELD, values: [o.now, o.perEndpointLimit, o.perEndpointLimit, o.limit, o.owner, o.now + o.leaseMs] })).rows
          : await claimSpreading(client, o, scan);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
      throw mapError(err);
    }
  } catch (err) {
    broken ??= err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.release(broken);
  }
  return rows.map(mapping.claimedFromRow);
}

// One statement: lock the delivery if `owner` holds its lease, store the attempt, move the
// delivery on. Nothing is written when the lease is lost. A delivery disabled while in flight
// (endpoint edited or disabled) keeps its state; the attempt is stored all the same.
const COMPLETE = `
  WITH owned AS (
    SELECT d.seq, d.id, d.state FROM deliveries d JOIN delivery_leases l ON l.delivery_seq = d.seq
     WHERE d.id = $1 AND l.owner = $2
       FOR UPDATE
  ), released AS (
    DELETE FROM delivery_leases l USING owned WHERE l.delivery_seq = owned.seq
  ), attempt AS (
    INSERT INTO delivery_attempts (delivery_id, cycle, number, started_at, duration_ms, signature_timestamp,
                                   outcome, status_code, error_class, response_body, success)
    SELECT id, $3::integer, $4::integer, $5::bigint, $6::integer, $7::bigint, $8::text, $9::integer, $10::text, $11::text, $12::boolean
      FROM owned
  )
  UPDATE deliveries d
     SET attempt_count = $4::integer,
         state = CASE WHEN owned.state = 'disabled' THEN d.state ELSE $13::text END,
         next_attempt_at = CASE WHEN owned.state = 'disabled' THEN d.next_attempt_at ELSE $14::bigint END,
         delivered_at = CASE WHEN owned.state = 'disabled' THEN d.delivered_at ELSE $15::bigint END,
         updated_at = $16::bigint
    FROM owned
   WHERE d.seq = owned.seq`;

export async function complete(pool: pg.Pool, owner: string, deliveryId: string, result: AttemptResult): Promise<boolean> {
  const a = result.attempt;
  if (a.deliveryId !== deliveryId) throw new Error(`attempt belongs to ${a.deliveryId}, not ${deliveryId}`);
  const changed = await new Conn(pool).run(COMPLETE, [
    deliveryId,
    owner,
    a.cycle,
    a.number,
    a.startedAt,
    a.durationMs,
    a.signatureTimestamp,
    a.outcome,
    a.statusCode,
    a.errorClass,
    textSafe(a.responseBody),
    a.success,
    result.state,
    result.nextAttemptAt,
    result.deliveredAt,
    a.startedAt + a.durationMs,
  ]);
  return changed > 0;
}

// completeMany: the whole batch in one statement (one round trip, one WAL flush). The input
// arrives as parallel arrays; rows are locked in seq order (as every other multi-row writer of
// deliveries does) and only those still leased by $1 with the very lease the claim gave.
const COMPLETE_MANY = `
  WITH input AS (
    SELECT * FROM unnest($2::text[], $3::bigint[], $4::integer[], $5::integer[], $6::bigint[], $7::integer[], $8::bigint[],
                         $9::text[], $10::integer[], $11::text[], $12::text[], $13::boolean[], $14::text[], $15::bigint[], $16::bigint[])
      AS t(id, lease_expires_at, cycle, number, started_at, duration_ms, signature_timestamp,
           outcome, status_code, error_class, response_body, success, state, next_attempt_at, delivered_at)
  ), owned AS (
    SELECT d.seq, d.id, d.state, l.expires_at FROM deliveries d JOIN delivery_leases l ON l.delivery_seq = d.seq
     WHERE d.id = ANY($2::text[]) AND l.owner = $1
     ORDER BY d.seq
       FOR UPDATE
  ), matched AS (
    SELECT i.*, owned.seq, owned.state AS current_state FROM input i
      JOIN owned ON owned.id = i.id AND owned.expires_at = i.lease_expires_at
  ), released AS (
    DELETE FROM delivery_leases l USING matched m WHERE l.delivery_seq = m.seq
  ), attempt AS (
    INSERT INTO delivery_attempts (delivery_id, cycle, number, started_at, duration_ms, signature_timestamp,
                                   outcome, status_code, error_class, response_body, success)
    SELECT id, cycle, number, started_at, duration_ms, signature_timestamp, outcome, status_code, error_class, response_body, success
      FROM matched
  )
  UPDATE deliveries d
     SET attempt_count = m.number,
         state = CASE WHEN m.current_state = 'disabled' THEN d.state ELSE m.state END,
         next_attempt_at = CASE WHEN m.current_state = 'disabled' THEN d.next_attempt_at ELSE m.next_attempt_at END,
         delivered_at = CASE WHEN m.current_state = 'disabled' THEN d.delivered_at ELSE m.delivered_at END,
         updated_at = m.started_at + m.duration_ms
    FROM matched m
   WHERE d.seq = m.seq
  RETURNING d.id`;

export async function completeMany(pool: pg.Pool, owner: string, completions: readonly Completion[]): Promise<boolean[]> {
  if (completions.length === 0) return [];
  const cols: unknown[][] = Array.from({ length: 15 }, () => []);
  for (const c of completions) {
    const a = c.result.attempt;
    if (a.deliveryId !== c.deliveryId) throw new Error(`attempt belongs to ${a.deliveryId}, not ${c.deliveryId}`);
    const values = [
      c.deliveryId, c.leaseExpiresAt, a.cycle, a.number, a.startedAt, a.durationMs, a.signatureTimestamp,
      a.outcome, a.statusCode, a.errorClass, textSafe(a.responseBody), a.success,
      c.result.state, c.result.nextAttemptAt, c.result.deliveredAt,
    ];
    values.forEach((v, i) => cols[i]!.push(v));
  }
  let rows: { id: string }[];
  try {
    rows = (await pool.query<{ id: string }>({ name: 'queue_complete_many', text: COMPLETE_MANY, values: [owner, ...cols] })).rows;
  } catch (err) {
    throw mapError(err);
  }
  const applied = new Set(rows.map((r) => r.id));
  return completions.map((c) => applied.has(c.deliveryId));
}

// Two transactions, one after the other: the completions commit durably first (without the
// claim lock, which must not wait for a WAL flush), then the claim sees the leases they freed.
export async function completeAndClaim(pool: pg.Pool, owner: string, completions: readonly Completion[], options: ClaimOptions | null): Promise<CompleteAndClaim> {
  const applied = await completeMany(pool, owner, completions);
  if (options === null) return { applied, claimed: [], claimError: null };
  try {
    return { applied, claimed: await claim(pool, options), claimError: null };
  } catch (err) {
    return { applied, claimed: [], claimError: err instanceof Error ? err : new Error(String(err)) };
  }
}

/** Returns how many leases were given back. */
export async function release(pool: pg.Pool, owner: string, deliveryIds: readonly string[]): Promise<number> {
  if (deliveryIds.length === 0) return 0;
  // The deliveries' row locks first, in seq order, as every writer of a lease takes them.
  return new Conn(pool).run(
    `WITH d AS (SELECT seq FROM deliveries WHERE id = ANY($1::text[]) ORDER BY seq FOR UPDATE)
     DELETE FROM delivery_leases l USING d WHERE l.delivery_seq = d.seq AND l.owner = $2`,
    [[...deliveryIds], owner],
  );
}

export async function nextDueAt(pool: pg.Pool): Promise<number | null> {
  // Two index lookups instead of one pass over every pending delivery: the earliest unleased
  // one (first entry of deliveries_due without a lease), and the few leased ones, which are
  // due again when both their lease and their due time have passed.
  const r = await new Conn(pool).one<{ due: number | null }>(
    `SELECT LEAST(
       (SELECT d.next_attempt_at FROM deliveries d
         WHERE d.state = 'pending' AND d.next_attempt_at IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_seq = d.seq)
         ORDER BY d.next_attempt_at LIMIT 1),
       (SELECT min(GREATEST(l.expires_at, d.next_attempt_at)) FROM delivery_leases l JOIN deliveries d ON d.seq = l.delivery_seq
         WHERE d.state = 'pending' AND d.next_attempt_at IS NOT NULL)
     ) AS due`,
  );
  return r?.due ?? null;
}

/** Runs fn in BEGIN … COMMIT on a client of its own (ROLLBACK on error). */
export async function inTransaction<T>(pool: pg.Pool, fn: (db: Conn) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      const value = await fn(new Conn(client));
      if ((await client.query('COMMIT')).command === 'ROLLBACK') throw new Error('transaction rolled back: a statement failed earlier in it');
      return value;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
      throw mapError(err);
    }
  } finally {
    // A client whose ROLLBACK failed is in an unknown state: destroy it rather than reuse it.
    client.release(broken);
  }
}
