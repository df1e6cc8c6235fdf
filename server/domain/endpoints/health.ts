// An endpoint's health (issue 69): the run of failed attempts it is in, the disables the service
// makes on its own (a 410 Gone at once; every attempt failed for the disable period and at least
// DISABLE_MIN_FAILURES in a row), and the operational events that tell the environment's other
// endpoints (webhook_endpoint.failing, .disabled, .recovered). `nextHealth` is pure: every rule
// is tested without a store or a clock; `recordEndpointAttempts` applies it in one transaction.
import type { Clock } from '../clock.ts';
import type { Store, Tx } from '../store.ts';
import type { DisabledReason, EndpointRecord, Millis, OperationalEventType } from '../model.ts';
import { recordOperationalEvent, type OperationalData } from '../operational-events.ts';
import { saveNewVersion } from './endpoints.ts';

/** Failed attempts in a row after which webhook_endpoint.failing is raised (spec: WebhookEndpointFailingEvent x-failing-after). */
export const FAILING_AFTER = 4;
/** Failed attempts in a row an endpoint needs, beside the disable period, to be disabled as failing: a quiet endpoint is not disabled on one failure. */
export const DISABLE_MIN_FAILURES = 10;
/** WEBHOOK_DISABLE_AFTER's default: 5 days (Svix's). */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 24 * 3600_000;

export interface HealthPolicy {
  /** How long every attempt must have failed before the endpoint is disabled (WEBHOOK_DISABLE_AFTER). */
  disableAfterMs: number;
}

/** One recorded attempt to an endpoint, as the worker saw it. */
export interface EndpointAttempt {
  environmentId: string;
  endpointId: string;
  /** The endpoint version the delivery was sent for: attempts to an older one say nothing of the current destination. */
  endpointVersion: number;
  at: Millis;
  success: boolean;
  statusCode: number | null;
}

type Health = Pick<EndpointRecord, 'failingSince' | 'consecutiveFailures' | 'failingNotifiedAt'>;

export interface Raised {
  type: OperationalEventType;
  health: Health;
  lastStatusCode: number | null;
  /** webhook_endpoint.recovered: the successful attempt's time. */
  at: Millis;
}

export interface HealthStep {
  health: Health;
  /** Events to raise, in order. */
  raised: Raised[];
  /** Set when the endpoint is to be disabled. */
  disable: DisabledReason | null;
}

/** The endpoint's health after its attempts (oldest first), at `now`. */
export function nextHealth(e: Health, attempts: readonly Pick<EndpointAttempt, 'at' | 'success' | 'statusCode'>[], policy: HealthPolicy, now: Millis): HealthStep {
  let h: Health = { failingSince: e.failingSince, consecutiveFailures: e.consecutiveFailures, failingNotifiedAt: e.failingNotifiedAt };
  const raised: Raised[] = [];
  for (const a of attempts) {
    if (a.success) {
      if (h.failingNotifiedAt !== null) raised.push({ type: 'webhook_endpoint.recovered', health: h, lastStatusCode: null, at: a.at });
      h = { failingSince: null, consecutiveFailures: 0, failingNotifiedAt: null };
      continue;
    }
    h = { ...h, failingSince: h.failingSince ?? a.at, consecutiveFailures: h.consecutiveFailures + 1 };
    const disable = a.statusCode === 410 ? 'gone' : failedLongEnough(h, a.at, policy) ? 'failing' : null;
    if (disable !== null) {
      raised.push({ type: 'webhook_endpoint.disabled', health: h, lastStatusCode: a.statusCode, at: now });
      return { health: h, raised, disable };
    }
    if (h.consecutiveFailures >= FAILING_AFTER && h.failingNotifiedAt === null) {
      h = { ...h, failingNotifiedAt: now };
      raised.push({ type: 'webhook_endpoint.failing', health: h, lastStatusCode: a.statusCode, at: now });
    }
  }
  return { health: h, raised, disable: null };
}

function failedLongEnough(h: Health, at: Millis, policy: HealthPolicy): boolean {
  return h.failingSince !== null && h.consecutiveFailures >= DISABLE_MIN_FAILURES && at - h.failingSince >= policy.disableAfterMs;
}

/** Whether the attempts change anything: a failure always may; a success only ends a run. */
export function mayChange(e: Pick<Health, 'consecutiveFailures'>, attempts: readonly Pick<EndpointAttempt, 'success'>[]): boolean {
  return e.consecutiveFailures > 0 || attempts.some((a) => !a.success);
}

export interface HealthDeps {
  store: Store;
  clock: Clock;
  policy: HealthPolicy;
}

/** What one call did, for the caller's metrics and logs. */
export interface HealthOutcome {
  disabled: Array<{ endpointId: string; reason: DisabledReason }>;
  raised: OperationalEventType[];
}

/**
 * Applies recorded attempts (any order, any endpoints) to their endpoints' health in one
 * transaction: runs counted, disables made, operational events recorded and fanned out.
 * Attempts to a disabled endpoint or to an older version of it are ignored.
 */
export async function recordEndpointAttempts(deps: HealthDeps, attempts: readonly EndpointAttempt[]): Promise<HealthOutcome> {
  const byEndpoint = new Map<string, EndpointAttempt[]>();
  for (const a of [...attempts].sort((x, y) => x.at - y.at)) {
    const key = `${a.environmentId}/${a.endpointId}`;
    const list = byEndpoint.get(key);
    if (list) list.push(a);
    else byEndpoint.set(key, [a]);
  }
  const outcome: HealthOutcome = { disabled: [], raised: [] };
  await deps.store.transaction(async (tx) => {
    for (const list of byEndpoint.values()) await applyTo(tx, deps, list, outcome);
  });
  return outcome;
}

async function applyTo(tx: Tx, deps: HealthDeps, list: readonly EndpointAttempt[], outcome: HealthOutcome): Promise<void> {
  const first = list[0]!;
  // Held: a rotation or an edit committing meanwhile is read, never overwritten with the row read before it.
  const e = await tx.endpoints.getHeld(first.environmentId, first.endpointId);
  if (!e || !e.active) return;
  const current = list.filter((a) => a.endpointVersion === e.version);
  if (!mayChange(e, current)) return;
  const now = deps.clock.now();
  const step = nextHealth(e, current, deps.policy, now);
  let saved: EndpointRecord;
  if (step.disable !== null) {
    saved = await saveNewVersion(tx, e, { ...step.health, active: false, disabledAt: now, disabledReason: step.disable }, now);
    outcome.disabled.push({ endpointId: e.id, reason: step.disable });
  } else {
    saved = { ...e, ...step.health };
    await tx.endpoints.update(saved);
  }
  for (const r of step.raised) {
    await recordOperationalEvent(tx, deps.clock, saved, r.type, dataOf(e, r, saved));
    outcome.raised.push(r.type);
  }
}

/** The event's data (WebhookEndpointHealthData and its type's own fields), less the environment name. */
function dataOf(before: EndpointRecord, r: Raised, after: EndpointRecord): OperationalData {
  const base = {
    endpointId: before.id,
    url: before.url,
    failingSince: r.health.failingSince ?? r.at,
    consecutiveFailures: Math.max(1, r.health.consecutiveFailures),
    ...(r.lastStatusCode === null ? {} : { lastStatusCode: r.lastStatusCode }),
  };
  if (r.type === 'webhook_endpoint.disabled') return { ...base, reason: after.disabledReason === 'gone' ? 'gone' : 'failing', disabledAt: after.disabledAt ?? r.at };
  if (r.type === 'webhook_endpoint.recovered') return { ...base, recoveredAt: r.at };
  return base;
}

