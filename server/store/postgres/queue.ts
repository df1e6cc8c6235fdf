// The delivery queue on PostgreSQL, shared by every instance: the shared statements of
// ../queue-sql.ts, run here. Each operation is one short
// database transaction on the pool; every update that moves a leased delivery on is guarded
// by the lease holder, and row locks settle races between instances.
import pg from 'pg';
import type { ClaimOptions, ClaimedDelivery, CompleteAndClaim, Completion, QueueStats } from '../../domain/store.ts';
import { Conn, mapError } from './db.ts';
import type { ClaimedRow } from '../rows.ts';
import { CLAIMED_COLUMNS, CLAIMED_JOINS, NEXT_DUE, STATS, claimSteps, claimStatements, type QueueDialect } from '../queue-sql.ts';
import { mapping, textSafe } from './rows.ts';

/**
 * Claims take this transaction-scoped advisory lock (per database) one at a time. SKIP LOCKED
 * alone would keep two claimers from leasing the same delivery, but both could count the same
 * live leases per destination and together go past perEndpointLimit. A claim is one statement,
 * so the wait is short.
 */
const CLAIM_LOCK = 7_270_002;

// Every claim statement ends here: lock the picked deliveries (SKIP LOCKED: a row that a
// completion or a domain transaction is writing waits for the next claim instead of stalling
// this one; the lock re-checks the row's latest version, and `locked` returns that version),
// then lease them: a new lease row, or one that has expired taken over (ON CONFLICT re-checks
// the latest lease; a live one is left alone and its delivery not claimed).
const LEASE_PICKED = (full: string): string => `, locked AS (
    SELECT d.* FROM deliveries d
     WHERE d.seq IN (SELECT seq FROM picked)
       AND d.state = 'pending' AND d.next_attempt_at <= @now
       FOR UPDATE OF d SKIP LOCKED
  ), leased AS (
    INSERT INTO delivery_leases AS l (delivery_seq, destination, owner, expires_at)
    SELECT seq, destination, @owner, @leaseEnd FROM locked
    ON CONFLICT (delivery_seq) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
     WHERE l.expires_at <= @now
    RETURNING l.delivery_seq, l.owner, l.expires_at
  )
  SELECT d.*, leased.owner AS lease_owner, leased.expires_at AS lease_expires_at, ${CLAIMED_COLUMNS}, ${full} AS window_full
    FROM leased
    JOIN locked d ON d.seq = leased.delivery_seq
    ${CLAIMED_JOINS}
   ORDER BY d.next_attempt_at, d.seq`;

const DIALECT: QueueDialect = {
  // LATERAL reads no more of a destination than its room.
  dueOf: (due, room, cap) => `CROSS JOIN LATERAL (${due(`LEAST(${room}, ${cap})`)}) c`,
  leasePicked: LEASE_PICKED,
  // Not scaled by perEndpointLimit: with a prefetch of 256 per destination that made a window
  // of 100 000 rows, and a backlog of 100 000 drained at a quarter of the speed of one of
  // 10 000. When the window does not fill the claim, the scan by destination takes over.
  window: (limit) => Math.max(200, limit * 4),
  flag: (value) => value,
};

/** A statement with @name parameters as $n, and the names in $n order. */
function numbered(text: string): { text: string; names: string[] } {
  const names: string[] = [];
  const out = text.replace(/@(\w+)/g, (_, name: string) => {
    if (!names.includes(name)) names.push(name);
    return `$${names.indexOf(name) + 1}`;
  });
  return { text: out, names };
}

const CLAIM = claimStatements(DIALECT);
const STEPS = {
  window: { name: 'queue_claim', ...numbered(CLAIM.window) },
  byDestination: { name: 'queue_claim_by_destination', ...numbered(CLAIM.byDestination) },
  held: { name: 'queue_claim_held', ...numbered(CLAIM.held) },
};

/** Runs the claim's statements (queue-sql.ts: claimSteps) in turn on `client`. */
async function claimRows(client: pg.PoolClient, o: ClaimOptions, leaseEnd: number): Promise<ClaimedRow[]> {
  const steps = claimSteps(o, DIALECT, leaseEnd);
  let step = steps.next({ rows: [], windowFull: false });
  while (!step.done) {
    const s = STEPS[step.value.text];
    const params = step.value.params;
    const { rows } = await client.query<ClaimedRow & { window_full: number }>({ name: s.name, text: s.text, values: s.names.map((n) => params[n]) });
    step = steps.next({ rows, windowFull: rows[0]?.window_full === 1 });
  }
  return step.value;
}

/**
 * Told of a claim whose COMMIT got no answer: its leases may stand, and no worker knows it
 * holds them (store.ts gives them back with releaseLostClaim once the database answers).
 */
export type LostClaim = (o: ClaimOptions, leaseEnd: number) => void;

/**
 * Each owner's lease ends, strictly increasing (now + leaseMs, or 1 ms past the owner's last
 * one), so an owner and a lease end name one claim: releaseLostClaim gives back that claim's
 * leases and never those of another claim the owner made in the same millisecond.
 */
export class LeaseEnds {
  private readonly last = new Map<string, number>();

  next(owner: string, now: number, leaseMs: number): number {
    const end = Math.max(now + leaseMs, (this.last.get(owner) ?? -Infinity) + 1);
    this.last.set(owner, end);
    // Owners come and go (a worker per start): forget those whose last lease has ended.
    if (this.last.size > 1_000) for (const [o, e] of this.last) if (e <= now) this.last.delete(o);
    return end;
  }
}

export async function claim(pool: pg.Pool, o: ClaimOptions, ends: LeaseEnds, lost?: LostClaim): Promise<ClaimedDelivery[]> {
  if (o.limit < 1 || o.perEndpointLimit < 1) return [];
  const leaseEnd = ends.next(o.owner, o.now, o.leaseMs);
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
      // The second statement sees the first's leases (the same transaction).
      rows = await claimRows(client, o, leaseEnd);
      await commitClaim(client, () => lost?.(o, leaseEnd));
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

// The batch of attempts in one statement (one round trip, one WAL flush). The input arrives as
// parallel arrays; rows are locked in seq order (as every other multi-row writer of deliveries
// does) and only those still leased by $1 with the very lease the claim gave. A delivery
// disabled while in flight (endpoint edited or disabled) keeps its state; the attempt is stored.
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

async function completeMany(pool: pg.Pool, owner: string, completions: readonly Completion[]): Promise<boolean[]> {
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
export async function completeAndClaim(pool: pg.Pool, owner: string, completions: readonly Completion[], options: ClaimOptions | null, ends: LeaseEnds, lost?: LostClaim): Promise<CompleteAndClaim> {
  const applied = await completeMany(pool, owner, completions);
  if (options === null) return { applied, claimed: [], claimError: null };
  try {
    return { applied, claimed: await claim(pool, options, ends, lost), claimError: null };
  } catch (err) {
    return { applied, claimed: [], claimError: err instanceof Error ? err : new Error(String(err)) };
  }
}

/** COMMIT of a claim; without the database's answer (connection lost) `lost` hears of it. */
async function commitClaim(client: pg.PoolClient, lost: () => void): Promise<void> {
  try {
    await client.query('COMMIT');
  } catch (err) {
    if (!(err instanceof pg.DatabaseError)) lost();
    throw err;
  }
}

/**
 * Gives back the leases a claim may have taken though its COMMIT went unanswered: each carries
 * the claim's owner and lease end, which name that claim alone (LeaseEnds). Returns how many
 * leases were given back.
 */
export async function releaseLostClaim(pool: pg.Pool, owner: string, leaseEnd: number): Promise<number> {
  return new Conn(pool).run(
    `WITH d AS (SELECT d.seq FROM deliveries d JOIN delivery_leases l ON l.delivery_seq = d.seq
                 WHERE l.owner = $1 AND l.expires_at = $2 ORDER BY d.seq FOR UPDATE OF d)
     DELETE FROM delivery_leases l USING d WHERE l.delivery_seq = d.seq AND l.owner = $1 AND l.expires_at = $2`,
    [owner, leaseEnd],
  );
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
  return (await new Conn(pool).one<{ due: number | null }>(NEXT_DUE))?.due ?? null;
}

const QUEUE_STATS = numbered(STATS);

/** Pending deliveries by state at `now`, for the operator's metrics. */
export async function stats(pool: pg.Pool, now: number): Promise<QueueStats> {
  const r = await new Conn(pool).one<{ due: number; leased: number; waiting: number; oldest: number | null }>(QUEUE_STATS.text, [now]);
  return { due: r?.due ?? 0, leased: r?.leased ?? 0, waiting: r?.waiting ?? 0, oldestDueAt: r?.oldest ?? null };
}
