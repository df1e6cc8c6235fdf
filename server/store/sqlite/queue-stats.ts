// Queue depth for the operator's metrics: one pass over the pending deliveries.
import type { QueueStats } from '../types.ts';
import type { Db } from './db.ts';
import { keepPlan } from './sql.ts';

const UNLEASED = '(lease_owner IS NULL OR lease_expires_at <= @now)';

export function stats(db: Db, now: number): QueueStats {
  const r = db.get<{ due: number | null; leased: number | null; waiting: number | null; oldest: number | null }>(
    keepPlan(`SELECT COUNT(*) FILTER (WHERE ${UNLEASED} AND next_attempt_at <= @now) AS due,
            COUNT(*) FILTER (WHERE NOT ${UNLEASED}) AS leased,
            COUNT(*) FILTER (WHERE ${UNLEASED} AND next_attempt_at > @now) AS waiting,
            MIN(next_attempt_at) FILTER (WHERE ${UNLEASED} AND next_attempt_at <= @now) AS oldest
       FROM deliveries WHERE state = 'pending'`),
    { now },
  );
  return { due: r?.due ?? 0, leased: r?.leased ?? 0, waiting: r?.waiting ?? 0, oldestDueAt: r?.oldest ?? null };
}
