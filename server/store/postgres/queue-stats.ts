// Queue depth for the operator's metrics: one pass over the pending deliveries.
import type pg from 'pg';
import type { QueueStats } from '../types.ts';
import { Conn } from './db.ts';

const UNLEASED = 'l.delivery_seq IS NULL';

export async function stats(pool: pg.Pool, now: number): Promise<QueueStats> {
  const r = await new Conn(pool).one<{ due: number; leased: number; waiting: number; oldest: number | null }>(
    `SELECT COUNT(*) FILTER (WHERE ${UNLEASED} AND next_attempt_at <= $1) AS due,
            COUNT(*) FILTER (WHERE NOT ${UNLEASED}) AS leased,
            COUNT(*) FILTER (WHERE ${UNLEASED} AND next_attempt_at > $1) AS waiting,
            MIN(next_attempt_at) FILTER (WHERE ${UNLEASED} AND next_attempt_at <= $1) AS oldest
       FROM deliveries d LEFT JOIN delivery_leases l ON l.delivery_seq = d.seq AND l.expires_at > $1
      WHERE d.state = 'pending'`,
    [now],
  );
  return { due: r?.due ?? 0, leased: r?.leased ?? 0, waiting: r?.waiting ?? 0, oldestDueAt: r?.oldest ?? null };
}
