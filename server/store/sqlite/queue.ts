// The delivery queue on SQLite. Each operation is synchronous and runs in one IMMEDIATE
// transaction (the store serialises them with its domain transactions); every update that
// moves a leased delivery on is guarded by the lease holder.
import type { AttemptResult, ClaimedDelivery } from '../types.ts';
import type { Db } from './db.ts';
import { attemptToRow, deliveryFromRow, eventFromRow, insertSql, type DeliveryRow, type EventRow } from './rows.ts';

export interface ClaimOptions {
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  perEndpointLimit: number;
}

// Destination of a delivery: its endpoint, or its url for payout callbacks.
const DEST = "CASE WHEN endpoint_id IS NOT NULL THEN 'e:' || endpoint_id ELSE 'u:' || url END";

// Due, unleased (or lease expired) pending deliveries, oldest due first, at most
// perEndpointLimit minus the live leases per destination. The candidates are read in due
// order from the partial index and bounded (@scan), skipping destinations already at their
// limit, so a claim costs the same with a backlog of a million as with ten.
const PICK = `
  WITH live AS (
    SELECT ${DEST} AS dest, COUNT(*) AS n FROM deliveries
     WHERE lease_owner IS NOT NULL AND lease_expires_at > @now
     GROUP BY dest
  ), candidates AS (
    SELECT seq, next_attempt_at, ${DEST} AS dest
      FROM deliveries
     WHERE state = 'pending' AND next_attempt_at <= @now
       AND (lease_owner IS NULL OR lease_expires_at <= @now)
       AND ${DEST} NOT IN (SELECT dest FROM live WHERE n >= @perEndpointLimit)
     ORDER BY next_attempt_at
     LIMIT @scan
  ), due AS (
    SELECT seq, next_attempt_at, dest,
           ROW_NUMBER() OVER (PARTITION BY dest ORDER BY next_attempt_at, seq) AS rank
      FROM candidates
  )
  SELECT due.seq FROM due LEFT JOIN live ON live.dest = due.dest
   WHERE due.rank + COALESCE(live.n, 0) <= @perEndpointLimit
   ORDER BY due.next_attempt_at, due.seq
   LIMIT @limit`;

const CLAIMED = `
  SELECT d.*, CASE WHEN d.endpoint_id IS NOT NULL THEN w.secret_enc ELSE env.callback_secret_enc END AS secret_enc
    FROM deliveries d
    JOIN environments env ON env.id = d.environment_id
    LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
   WHERE d.seq = ?`;

export function claim(db: Db, o: ClaimOptions): ClaimedDelivery[] {
  if (o.limit < 1 || o.perEndpointLimit < 1) return [];
  const scan = Math.max(64, o.limit * 2);
  const seqs = db.all<{ seq: number }>(PICK, { now: o.now, perEndpointLimit: o.perEndpointLimit, limit: o.limit, scan }).map((r) => r.seq);
  const lease = db.statement('UPDATE deliveries SET lease_owner = ?, lease_expires_at = ? WHERE seq = ?');
  return seqs.map((seq) => {
    lease.run(o.owner, o.now + o.leaseMs, seq);
    const d = db.get<DeliveryRow & { secret_enc: string }>(CLAIMED, seq);
    const e = d && db.get<EventRow>('SELECT * FROM events WHERE id = ?', d.event_id);
    if (!d || !e) throw new Error(`claimed delivery ${seq} vanished`);
    return { delivery: deliveryFromRow(d), event: eventFromRow(e), secretEnc: d.secret_enc };
  });
}

export function complete(db: Db, owner: string, deliveryId: string, result: AttemptResult): boolean {
  if (result.attempt.deliveryId !== deliveryId) throw new Error(`attempt belongs to ${result.attempt.deliveryId}, not ${deliveryId}`);
  const row = db.get<{ state: string }>('SELECT state FROM deliveries WHERE id = ? AND lease_owner = ?', deliveryId, owner);
  if (!row) return false;
  const a = result.attempt;
  const attemptRow = attemptToRow(a);
  db.run(insertSql('delivery_attempts', attemptRow), attemptRow);
  const finishedAt = a.startedAt + a.durationMs;
  if (row.state === 'disabled') {
    // Disabled while in flight (endpoint edited or disabled): keep it disabled, keep the attempt.
    db.run(
      'UPDATE deliveries SET attempt_count = ?, lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE id = ?',
      a.number,
      finishedAt,
      deliveryId,
    );
  } else {
    db.run(
      `UPDATE deliveries
          SET attempt_count = ?, state = ?, next_attempt_at = ?, delivered_at = ?,
              lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
        WHERE id = ?`,
      a.number,
      result.state,
      result.nextAttemptAt,
      result.deliveredAt,
      finishedAt,
      deliveryId,
    );
  }
  return true;
}

/** Returns how many leases were given back. */
export function release(db: Db, owner: string, deliveryIds: readonly string[]): number {
  const stmt = db.statement('UPDATE deliveries SET lease_owner = NULL, lease_expires_at = NULL WHERE id = ? AND lease_owner = ?');
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
