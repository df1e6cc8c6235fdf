// Recovery by time range: the failed (or all finished) order-event deliveries of one endpoint
// created in [since, until) go again, each as a manual retry does (a new cycle, the same event
// id and payload, to the endpoint's current url, version and secret), due one after another
// RECOVERY.spacingMs apart so the receiver is not flooded. A delivery still pending is not
// matched, so each is queued once per request; at most RECOVERY.max per request.
import { RECOVERY } from '../../../generated/vocabulary.ts';
import type { EndpointRecord, Millis } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { findActiveEndpoint } from '../endpoints/endpoints.ts';
import { AppError } from '../errors.ts';
import { recoverMissed, type RecoveryView } from './missed.ts';

export interface RecoveryRequest {
  since: Millis;
  until: Millis;
  include: 'failed' | 'all';
  /** A disabled endpoint of the environment: recover the events it missed instead (issue 69, missed.ts). */
  missedBy?: string;
}

export type { RecoveryView };

export async function recoverDeliveries(services: Services, scope: Scope, endpointId: string, req: RecoveryRequest): Promise<RecoveryView> {
  for (const [field, ms] of [['since', req.since], ['until', req.until]] as const) {
    if (!Number.isFinite(ms)) {
      throw new AppError('validation-failed', `The request body is invalid: /body/${field} is not a date-time.`, { errors: [{ pointer: `/body/${field}`, detail: 'is not a date-time' }] });
    }
  }
  if (req.until <= req.since) {
    throw new AppError('validation-failed', 'The request body is invalid: /body/until must be later than since.', {
      errors: [{ pointer: '/body/until', detail: 'must be later than since' }],
    });
  }
  if (req.missedBy !== undefined) return recoverMissed(services, scope, endpointId, { since: req.since, until: req.until, missedBy: req.missedBy });
  const delivered = req.include === 'all';
  const query = (eventTypes: EndpointRecord['eventTypes']) => ({ endpointId, since: req.since, until: req.until, delivered, limit: RECOVERY.max + 1, eventTypes });
  // Read outside the write transaction: the scan never holds the writer. Only the endpoint's
  // types go again; an unknown endpoint matches nothing here and answers 404 below.
  const read = await services.store.read(async (tx) => {
    const e = await tx.endpoints.get(scope.environmentId, endpointId);
    return { version: e?.version ?? null, matched: e === null ? [] : await tx.deliveries.recoverable(scope.environmentId, query(e.eventTypes)) };
  });
  return services.store.transaction(async (tx) => {
    const endpoint = await findActiveEndpoint(tx, scope, endpointId);
    // Its types changed between the read and now: match again with the current ones.
    const matched = endpoint.version === read.version ? read.matched : await tx.deliveries.recoverable(scope.environmentId, query(endpoint.eventTypes));
    const batch = matched.slice(0, RECOVERY.max);
    const now = services.clock.now();
    let recovered = 0;
    let lastDueAt: Millis | null = null;
    for (const d of batch) {
      const dueAt = now + recovered * RECOVERY.spacingMs;
      const target = { endpointId: endpoint.id, endpointVersion: endpoint.version, url: endpoint.url };
      // Guarded by the state in the store: one retried or recovered meanwhile is skipped.
      if (await tx.deliveries.restart({ id: d.id, environmentId: scope.environmentId, ...target, now, dueAt, delivered })) {
        recovered++;
        lastDueAt = dueAt;
      }
    }
    return { recovered, lastDueAt, nextSince: matched[RECOVERY.max]?.createdAt ?? null };
  });
}
