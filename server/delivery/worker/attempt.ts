// One attempt: sign the event with the attempt's own time, send it, and classify the outcome
// into what the store records (delivered; pending with the next due time; failed at the end of
// the cycle). Nothing here touches the queue: the completer records the result.
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.ts';
import type { AttemptRecord } from '../../domain/model.ts';
import type { AttemptResult, Completion } from '../../domain/store.ts';
import type { RetryPolicy, nextAttemptAt } from '../schedule.ts';
import { throttledFor } from '../retry-after.ts';
import type { SendOutcome, Sender } from '../sender.ts';
import { buildDeliveryRequest, type DeliveryRequest } from '../sign.ts';
import type { Lease } from './lease.ts';

/** The shape of `nextAttemptAt` (schedule.ts): attempt number (1-based), now, policy → due time or null. */
export type RetrySchedule = typeof nextAttemptAt;

/** What the log lines about an attempt say (never a secret or a signature). */
export type AttemptFields = Record<string, unknown>;

/** A finished attempt, to be recorded under its lease. */
export interface Attempted {
  lease: Lease;
  completion: Completion;
  /** Its log line's fields, outcome included. */
  summary: AttemptFields;
  /** A 429 or 503 with Retry-After: its destination sends nothing before this (retry-after.ts). */
  pauseUntil?: number;
}

export interface AttemptDeps {
  sender: Sender;
  clock: Clock;
  retry: RetryPolicy;
  schedule: RetrySchedule;
  log: Logger;
  /** Opens a sealed secret (memoised by the caller). */
  openSecret(sealed: string): string;
  /** Traces each attempt (tracing on: observability/tracing/delivery.ts); absent, nothing is traced. */
  tracer?: AttemptTracer;
}

/** A span per attempt, told of it as it starts and ends. */
export interface AttemptTracer {
  start(lease: Lease): AttemptTrace;
}

export interface AttemptTrace {
  /** The headers to send: the signed ones and the attempt's trace context (traceparent). */
  headers(signed: Record<string, string>): Record<string, string>;
  end(sent: SendOutcome): void;
}

/** Recorded, without sending, when nothing can be signed. */
const UNSIGNABLE: SendOutcome = { outcome: 'error', statusCode: null, errorClass: 'network_error', responseBody: null, success: false, durationMs: 0 };

export const attemptFields = (lease: Lease): AttemptFields => ({
  deliveryId: lease.delivery.id,
  eventId: lease.event.id,
  kind: lease.delivery.kind,
  endpointId: lease.delivery.endpointId,
  cycle: lease.delivery.cycle,
  attempt: lease.delivery.attemptCount + 1,
});

/**
 * The next state after an attempt that ended at `finishedAt`. A receiver's Retry-After
 * (`notBefore`) moves the next attempt later, never earlier, and is never scaled; the attempt
 * counts as one of the cycle's ten like any other failure, so a receiver that always throttles
 * still ends the cycle.
 */
export function classify(attempt: AttemptRecord, finishedAt: number, schedule: RetrySchedule, retry: RetryPolicy, notBefore: number | null = null): AttemptResult {
  if (attempt.success) return { attempt, state: 'delivered', nextAttemptAt: null, deliveredAt: finishedAt };
  const scheduled = schedule(attempt.number, finishedAt, retry);
  const next = scheduled === null ? null : Math.max(scheduled, notBefore ?? scheduled);
  return { attempt, state: next === null ? 'failed' : 'pending', nextAttemptAt: next, deliveredAt: null };
}

/**
 * Signs and sends one attempt. Resolves with what was sent and when; a secret that cannot be
 * opened (wrong SECRETS_KEY, damaged value) sends nothing and is a failed attempt, so the
 * schedule moves on and ends instead of retrying forever on lease expiry.
 */
async function signAndSend(deps: AttemptDeps, lease: Lease, fields: AttemptFields, signal: AbortSignal, trace: AttemptTrace | undefined): Promise<{ sent: SendOutcome; startedAt: number; signatureTimestamp: number }> {
  const startedAt = deps.clock.now();
  let req: DeliveryRequest;
  try {
    // Signed with the attempt's own time: a fresh t for every attempt.
    req = buildDeliveryRequest(lease.event, deps.openSecret(lease.secretEnc), startedAt, lease.signatureScheme);
  } catch (err) {
    // The error text names no secret (SecretBox and signature errors don't).
    deps.log.error({ ...fields, err: err instanceof Error ? err.message : String(err) }, 'cannot sign the delivery; attempt recorded as failed without sending');
    return { sent: UNSIGNABLE, startedAt, signatureTimestamp: Math.floor(startedAt / 1000) };
  }
  const headers = trace ? trace.headers(req.headers) : req.headers;
  const sent = await deps.sender.send({ url: lease.delivery.url, body: req.body, headers, signal });
  return { sent, startedAt, signatureTimestamp: req.timestamp };
}

/** Makes one attempt of a leased delivery; `signal` aborts its send (shutdown). */
export function attempter(deps: AttemptDeps): (lease: Lease, signal: AbortSignal) => Promise<Attempted> {
  return async (lease, signal) => {
    const { delivery } = lease;
    const fields = attemptFields(lease);
    const trace = deps.tracer?.start(lease);
    const { sent, startedAt, signatureTimestamp } = await signAndSend(deps, lease, fields, signal, trace);
    trace?.end(sent);
    const attempt: AttemptRecord = {
      deliveryId: delivery.id,
      cycle: delivery.cycle,
      number: delivery.attemptCount + 1,
      startedAt,
      durationMs: sent.durationMs,
      signatureTimestamp,
      outcome: sent.outcome,
      statusCode: sent.statusCode,
      errorClass: sent.errorClass,
      responseBody: sent.responseBody,
      success: sent.success,
    };
    const finishedAt = deps.clock.now();
    const wait = throttledFor(sent.statusCode, sent.retryAfter, finishedAt);
    const pauseUntil = wait === null ? null : finishedAt + wait;
    const result = classify(attempt, finishedAt, deps.schedule, deps.retry, pauseUntil);
    const summary = { ...fields, statusCode: sent.statusCode, errorClass: sent.errorClass, durationMs: sent.durationMs, state: result.state, nextAttemptAt: result.nextAttemptAt, ...(pauseUntil !== null ? { retryAfterMs: wait } : {}) };
    const completion = { deliveryId: delivery.id, leaseExpiresAt: delivery.leaseExpiresAt ?? 0, result };
    return { lease, completion, summary, ...(pauseUntil !== null ? { pauseUntil } : {}) };
  };
}

export const LEASE_LOST = 'lease lost before the attempt was recorded; another worker owns the delivery now';

/** Logs a recorded attempt (or, `ok` false, one whose lease was lost: nothing was written). */
export function logOutcome(log: Logger, done: Attempted, ok: boolean, lostMessage = LEASE_LOST): void {
  const { summary } = done;
  const { result } = done.completion;
  if (!ok) log.warn(summary, lostMessage);
  else if (result.attempt.success) {
    if (log.isLevelEnabled('info')) log.info(summary, 'delivery delivered');
  } else if (result.state === 'failed') log.warn(summary, 'delivery failed: last attempt of the cycle');
  else if (log.isLevelEnabled('info')) log.info(summary, 'attempt failed; retry scheduled');
}
