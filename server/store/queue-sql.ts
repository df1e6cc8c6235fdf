// The delivery queue's SQL, written once for both stores over one structure: deliveries carry
// their `destination` (endpoint, or url for payout callbacks), and a lease is a row of
// delivery_leases (delivery_seq, destination, owner, expires_at), deleted by the completion or
// release that ends it; an expired one stays until a claim takes it over. Statements use @name
// parameters (PostgreSQL's queue numbers them) and only SQL both dialects read the same way
// (FILTER, CAST, CASE rather than bool_or, ::, LEAST). What differs is a hook of QueueDialect.
import type { ClaimOptions } from '../domain/store.ts';
import type { ClaimedRow } from './rows.ts';

export interface QueueDialect {
  /**
   * Joins, to each row of the outer query, the rows of `due(limit)` (one destination's due,
   * unleased deliveries, oldest first) as `c`. `room` (an outer column) and `cap` bound how many
   * are used: the caller keeps rank <= room, so a dialect may also read fewer (PostgreSQL's
   * LATERAL reads LEAST(room, cap); SQLite's IN subquery cannot see the outer row and reads cap).
   */
  dueOf(due: (limit: string) => string, room: string, cap: string): string;
  /**
   * What ends a claim statement after its CTE `picked` (the chosen seqs): PostgreSQL locks and
   * leases in the same statement, SQLite returns the seqs and leases them next. Each row also
   * carries `full` (an integer, 1 or 0) as `window_full`.
   */
  leasePicked(full: string): string;
  /** How many due rows the first step reads for a claim of `limit` (measured per store). */
  window(limit: number): number;
  /** A boolean parameter as the driver binds it. */
  flag(value: boolean): unknown;
}

// Live leases per destination: all of them, other owners', this owner's.
const LIVE = `live AS (
    SELECT destination, COUNT(*) AS n,
           COUNT(*) FILTER (WHERE owner <> @owner) AS foreign_n,
           COUNT(*) FILTER (WHERE owner = @owner) AS mine_n
      FROM delivery_leases WHERE expires_at > @now
     GROUP BY destination
  )`;

// Destinations held back (destination_pauses): a receiver's Retry-After, or a rate cap's next
// slot written as the holder gave its leases back. The table is small (one row per such
// destination), so every claim step reads it whole; rows in the past are inert.
const NOT_PAUSED = (destination: string) => `${destination} NOT IN (SELECT p.destination FROM destination_pauses p WHERE p.paused_until > @now)`;

const UNLEASED = `NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_seq = d.seq AND l.expires_at > @now)`;

// One destination's due, unleased deliveries (`destination`, an outer column), oldest first.
const dueOf = (destination: string) => (limit: string) => `
  SELECT d.seq, d.next_attempt_at FROM deliveries d
   WHERE d.state = 'pending' AND d.destination = ${destination} AND d.next_attempt_at <= @now AND ${UNLEASED}
   ORDER BY d.next_attempt_at, d.seq
   LIMIT ${limit}`;

// The spread (ClaimOptions.spread), the same in every step: of the due rows of `ranked`
// (destination, rank, n due, mine), destinations this owner holds no lease on are taken earliest
// due first, each counting min(n, perDestination) send slots, until `slots` are covered (NULL:
// no bound).
const FRESH = `fresh AS (
    SELECT destination FROM (
      SELECT destination,
             COALESCE(SUM(CASE WHEN n < CAST(@perDestination AS BIGINT) THEN n ELSE CAST(@perDestination AS BIGINT) END)
                      OVER (ORDER BY next_attempt_at, seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
        FROM ranked WHERE rank = 1 AND NOT mine
    ) f
     WHERE CAST(@slots AS BIGINT) IS NULL OR f.before < CAST(@slots AS BIGINT)
  )`;

// What every step picks from `ranked`: within each destination's room, its own destinations
// and the fresh ones, oldest due first, at most the claim's limit.
const PICKED = `picked AS (
    SELECT seq FROM ranked
     WHERE rank <= room AND (mine OR destination IN (SELECT destination FROM fresh))
     ORDER BY next_attempt_at, seq
     LIMIT @limit
  )`;

/**
 * The three claim statements, each one pick-and-lease:
 * - `window`: a window of `cap` due rows in due order (the common case: the oldest due can be
 *   taken), skipping destinations at their limit and, when exclusive, those another owner serves;
 * - `byDestination`, when the window did not fill the claim (destinations at their limit fill it):
 *   a loose scan of deliveries_destination_due, one index step per destination with pending
 *   deliveries and at most the room left of each, so a destination at its limit with a backlog of
 *   a million costs one step;
 * - `held`, for a claim that may not spread (spread.slots 0): only tops up the destinations this
 *   owner holds alone, one index step each.
 */
export function claimStatements(d: QueueDialect): { window: string; byDestination: string; held: string } {
  const window = `
  WITH ${LIVE}, candidates AS (
    SELECT d.seq, d.next_attempt_at, d.destination FROM deliveries d
     WHERE d.state = 'pending' AND d.next_attempt_at <= @now AND ${UNLEASED}
       AND d.destination NOT IN (SELECT destination FROM live WHERE n >= @perEndpointLimit OR (CAST(@exclusive AS BOOLEAN) AND foreign_n > 0))
       AND ${NOT_PAUSED('d.destination')}
     ORDER BY d.next_attempt_at, d.seq
     LIMIT @cap
  ), ranked AS (
    SELECT c.seq, c.next_attempt_at, c.destination,
           @perEndpointLimit - COALESCE(live.n, 0) AS room, COALESCE(live.mine_n, 0) > 0 AS mine,
           ROW_NUMBER() OVER (PARTITION BY c.destination ORDER BY c.next_attempt_at, c.seq) AS rank,
           COUNT(*) OVER (PARTITION BY c.destination) AS n
      FROM candidates c LEFT JOIN live ON live.destination = c.destination
  ), ${FRESH}, ${PICKED} ${d.leasePicked('CASE WHEN (SELECT COUNT(*) FROM candidates) >= @cap THEN 1 ELSE 0 END')}`;
  const byDestination = `
  WITH RECURSIVE dests(destination) AS (
    SELECT (SELECT destination FROM deliveries WHERE state = 'pending' ORDER BY destination LIMIT 1)
    UNION ALL
    SELECT (SELECT d.destination FROM deliveries d WHERE d.state = 'pending' AND d.destination > dests.destination ORDER BY d.destination LIMIT 1)
      FROM dests WHERE dests.destination IS NOT NULL
  ), ${LIVE}, open AS (
    SELECT dests.destination, @perEndpointLimit - COALESCE(live.n, 0) AS room, COALESCE(live.mine_n, 0) > 0 AS mine
      FROM dests LEFT JOIN live ON live.destination = dests.destination
     WHERE dests.destination IS NOT NULL AND COALESCE(live.n, 0) < @perEndpointLimit
       AND NOT (CAST(@exclusive AS BOOLEAN) AND COALESCE(live.foreign_n, 0) > 0)
       AND ${NOT_PAUSED('dests.destination')}
  ), due AS (
    SELECT open.destination, open.room, open.mine, c.seq, c.next_attempt_at,
           ROW_NUMBER() OVER (PARTITION BY open.destination ORDER BY c.next_attempt_at, c.seq) AS rank
      FROM open ${d.dueOf(dueOf('open.destination'), 'open.room', '@cap')}
  ), ranked AS (
    SELECT *, COUNT(*) OVER (PARTITION BY destination) AS n FROM due WHERE rank <= room
  ), ${FRESH}, ${PICKED} ${d.leasePicked('0')}`;
  const held = `
  WITH own AS (
    SELECT destination, @perEndpointLimit - COUNT(*) AS room FROM delivery_leases
     WHERE expires_at > @now AND ${NOT_PAUSED('destination')}
     GROUP BY destination
    HAVING COUNT(*) FILTER (WHERE owner <> @owner) = 0 AND COUNT(*) < @perEndpointLimit
  ), ranked AS (
    SELECT own.destination, own.room, c.seq, c.next_attempt_at,
           ROW_NUMBER() OVER (PARTITION BY own.destination ORDER BY c.next_attempt_at, c.seq) AS rank
      FROM own ${d.dueOf(dueOf('own.destination'), 'own.room', '@limit')}
  ), picked AS (
    SELECT seq FROM ranked WHERE rank <= room ORDER BY next_attempt_at, seq LIMIT @limit
  ) ${d.leasePicked('0')}`;
  return { window, byDestination, held };
}

/** One statement of a claim and its parameters (by name). */
export interface ClaimStep {
  text: 'window' | 'byDestination' | 'held';
  params: Record<string, unknown>;
}

/** What a claim statement leased, and whether it read as many due rows as its window may (`window` only). */
export interface StepResult {
  rows: ClaimedRow[];
  windowFull: boolean;
}

/**
 * The claim, one shape for both stores: a generator of the statements to run, each given back
 * the rows it leased (StepResult). A claim that may not spread tops up held destinations only;
 * otherwise the window, then (when it did not fill the claim from a full window) the scan by
 * destination, which sees the first step's leases: it counts them, never picks them again,
 * and spreads over what the first step left of the spread (slotsLeft). Rows come back in due
 * order.
 */
export function* claimSteps(o: ClaimOptions, d: QueueDialect, leaseEnd = o.now + o.leaseMs): Generator<ClaimStep, ClaimedRow[], StepResult> {
  if (o.limit < 1 || o.perEndpointLimit < 1) return [];
  const params = (cap: number, limit: number, slots: number | null): Record<string, unknown> => ({
    now: o.now, perEndpointLimit: o.perEndpointLimit, cap, limit, owner: o.owner, leaseEnd,
    exclusive: d.flag(o.exclusive === true), slots, perDestination: o.spread?.perDestination ?? 1,
  });
  if (o.spread?.slots === 0) return (yield { text: 'held', params: params(o.limit, o.limit, 0) }).rows;
  const first = yield { text: 'window', params: params(d.window(o.limit), o.limit, o.spread?.slots ?? null) };
  // A window that read fewer due rows than it may saw every due row of the open destinations and
  // took what their room and the spread allow: the scan would find nothing more, at most spread
  // a little further (the next claim does). Skipping it halved a light load's claim statements
  // (PostgreSQL CPU per delivered order 705 → 512 µs). A statement that leased nothing says
  // nothing of its window: on PostgreSQL a full window whose picks were all locked by another
  // writer (SKIP LOCKED) is then taken as not full, and its deliveries wait for the next claim.
  if (first.rows.length >= o.limit || !first.windowFull) return first.rows;
  const more = (yield { text: 'byDestination', params: params(o.perEndpointLimit, o.limit - first.rows.length, slotsLeft(o, first.rows)) }).rows;
  return [...first.rows, ...more].sort((x, y) => (x.next_attempt_at ?? 0) - (y.next_attempt_at ?? 0) || x.seq - y.seq);
}

/**
 * The spread left for the second step after the first leased `rows`: each destination counts
 * min(its deliveries, perDestination) slots, also one the owner held already, so the second step
 * spreads less than it could, never more, and the next claim goes on from there.
 */
function slotsLeft(o: ClaimOptions, rows: readonly ClaimedRow[]): number | null {
  if (o.spread === undefined) return null;
  const per = new Map<string, number>();
  for (const r of rows) per.set(r.destination, (per.get(r.destination) ?? 0) + 1);
  let used = 0;
  for (const n of per.values()) used += Math.min(n, o.spread.perDestination);
  return Math.max(0, o.spread.slots - used);
}

/**
 * Everything an attempt needs beside each claimed delivery `d` and its lease: its event and the
 * sealed secret to sign with, and its endpoint's failures in a row (issue 69: only a success to
 * an endpoint in a run of failures has health to record; a healthy one's costs nothing more).
 */
export const CLAIMED_COLUMNS = `CASE WHEN d.endpoint_id IS NOT NULL THEN w.secret_enc ELSE env.callback_secret_enc END AS secret_enc,
         CASE WHEN d.endpoint_id IS NOT NULL THEN w.signature_scheme ELSE 'service-signature' END AS signature_scheme,
         w.max_per_second AS max_per_second,
         w.consecutive_failures AS endpoint_failures,
         e.id AS e_id, e.environment_id AS e_environment_id, e.type AS e_type, e.payload AS e_payload,
         e.order_id AS e_order_id, e.merchant_reference AS e_merchant_reference,
         e.transaction_id AS e_transaction_id, e.created_at AS e_created_at, e.trace_context AS e_trace_context`;
export const CLAIMED_JOINS = `JOIN events e ON e.id = d.event_id
    JOIN environments env ON env.id = d.environment_id
    LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id`;

/**
 * When the next pending delivery is due: the earliest unleased one (the first entry of
 * deliveries_due without a lease row), or a leased one, due again once both its lease and its due
 * time have passed (leases are few). An expired lease counts until a claim takes it over: that can
 * only wake the worker early, never late.
 */
export const NEXT_DUE = `
  SELECT MIN(due) AS due FROM (
    SELECT * FROM (SELECT d.next_attempt_at AS due FROM deliveries d
       WHERE d.state = 'pending' AND d.next_attempt_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_seq = d.seq)
       ORDER BY d.next_attempt_at LIMIT 1) unleased
    UNION ALL
    SELECT MIN(CASE WHEN l.expires_at > d.next_attempt_at THEN l.expires_at ELSE d.next_attempt_at END) FROM delivery_leases l
      JOIN deliveries d ON d.seq = l.delivery_seq
     WHERE d.state = 'pending' AND d.next_attempt_at IS NOT NULL
  ) next`;

/** Holds `destination` back until @until (never earlier than a pause it has already). */
export const PAUSE = (later: (a: string, b: string) => string): string => `
  INSERT INTO destination_pauses (destination, paused_until) VALUES (@destination, @until)
  ON CONFLICT (destination) DO UPDATE SET paused_until = ${later('destination_pauses.paused_until', 'excluded.paused_until')}`;

/** Queue depth for the operator's metrics at @now: one pass over the pending deliveries. */
export const STATS = `
  SELECT COUNT(*) FILTER (WHERE l.delivery_seq IS NULL AND d.next_attempt_at <= @now) AS due,
         COUNT(*) FILTER (WHERE l.delivery_seq IS NOT NULL) AS leased,
         COUNT(*) FILTER (WHERE l.delivery_seq IS NULL AND d.next_attempt_at > @now) AS waiting,
         MIN(d.next_attempt_at) FILTER (WHERE l.delivery_seq IS NULL AND d.next_attempt_at <= @now) AS oldest
    FROM deliveries d LEFT JOIN delivery_leases l ON l.delivery_seq = d.seq AND l.expires_at > @now
   WHERE d.state = 'pending'`;
