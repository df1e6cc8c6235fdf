// The retention settings (docs/operations.md, "Retention"): the periods default to the
// contract's (spec info.x-retention, generated/vocabulary.ts: RETENTION).
import { RETENTION } from '../../generated/vocabulary.ts';
import type { RetentionPolicy } from './pruner.ts';

export interface RetentionSettings {
  /** PRUNER=off: this instance never prunes (another one, or nobody, does). */
  enabled: boolean;
  policy: RetentionPolicy;
  intervalMs: number;
  batch: number;
  pauseMs: number;
  busyShare: number;
  /** PRUNE_STATEMENT_TIMEOUT: a batch statement's bound on PostgreSQL, apart from the API's. */
  statementMs: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: HOUR, d: DAY };

/** "30d", "72h", "2m", "500ms" in milliseconds; an Error naming the setting otherwise. */
export function parseDuration(name: string, raw: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(raw);
  const ms = m ? Number(m[1]) * (UNITS[m[2] ?? ''] ?? Number.NaN) : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new Error(`${name} must be a positive duration such as 30d, 72h, 5m, 30s or 500ms, not ${raw}`);
  return ms;
}

export function retentionSettings(env: NodeJS.ProcessEnv): RetentionSettings {
  const duration = (name: string, fallback: string): number => parseDuration(name, env[name] || fallback);
  const batch = Number(env.PRUNE_BATCH ?? 500);
  if (!Number.isInteger(batch) || batch < 1 || batch > 10_000) throw new Error(`PRUNE_BATCH must be a whole number from 1 to 10000, not ${env.PRUNE_BATCH}`);
  const busyShare = Number(env.PRUNE_BUSY_SHARE ?? 0.05);
  if (!(busyShare > 0 && busyShare <= 1)) throw new Error(`PRUNE_BUSY_SHARE must be a fraction above 0 and at most 1, such as 0.05, not ${env.PRUNE_BUSY_SHARE}`);
  const pruner = env.PRUNER ?? 'on';
  if (pruner !== 'on' && pruner !== 'off') throw new Error(`PRUNER must be on or off, not ${pruner}`);
  return {
    enabled: pruner === 'on',
    policy: {
      liveMs: duration('RETENTION_LIVE', `${RETENTION.activityDays.live}d`),
      testMs: duration('RETENTION_TEST', `${RETENTION.activityDays.test}d`),
      idempotencyKeyMs: duration('IDEMPOTENCY_KEY_RETENTION', `${RETENTION.idempotencyKeyHours}h`),
    },
    intervalMs: duration('PRUNE_INTERVAL', '60s'),
    batch,
    pauseMs: duration('PRUNE_PAUSE', '20ms'),
    busyShare,
    statementMs: duration('PRUNE_STATEMENT_TIMEOUT', '10s'),
  };
}
