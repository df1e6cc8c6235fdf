// Nothing lost after a disable (issue 69): the events a disabled endpoint did not deliver go to
// its replacement. Every event created in [since, until) of the types the replacement receives
// now, which the disabled endpoint has no delivered delivery of and the replacement no delivery
// of at all, gets a new delivery to the replacement with its original event id and payload, due
// RECOVERY.spacingMs apart as a recovery is; at most RECOVERY.max per request (nextSince goes on).
// A second request finds the ones queued by the first as the replacement's own: none twice.
import { RECOVERY } from '../../../generated/vocabulary.ts';
import type { Scope, Services } from '../context.ts';
import { findActiveEndpoint } from '../endpoints/endpoints.ts';
import { AppError } from '../errors.ts';
import { newDelivery } from '../events.ts';
import { newDeliveryId } from '../ids.ts';
import { ORDER_EVENT_TYPES, type Millis } from '../model.ts';

/** What a recovery queued (recover.ts answers it too). */
export interface RecoveryView {
  recovered: number;
  /** When the last queued delivery becomes due; null when none was queued. */
  lastDueAt: Millis | null;
  /** The since of the next request when more matched than one request queues; null when done. */
  nextSince: Millis | null;
}

export interface MissedRequest {
  since: Millis;
  until: Millis;
  /** The disabled endpoint whose events are recovered. */
  missedBy: string;
}

function notDisabled(id: string): AppError {
  return new AppError('validation-failed', `The request body is invalid: /body/missedBy is not a disabled webhook endpoint of this environment (${id}).`, {
    errors: [{ pointer: '/body/missedBy', detail: 'is not a disabled webhook endpoint of this environment' }],
  });
}

export async function recoverMissed(services: Services, scope: Scope, endpointId: string, req: MissedRequest): Promise<RecoveryView> {
  return services.store.transaction(async (tx) => {
    const to = await findActiveEndpoint(tx, scope, endpointId);
    const gone = await tx.endpoints.get(scope.environmentId, req.missedBy);
    if (!gone || gone.active) throw notDisabled(req.missedBy);
    // Every order type for an endpoint of every type (it receives no operational events).
    const types = to.eventTypes ?? ORDER_EVENT_TYPES;
    const events = await tx.events.missed(scope.environmentId, { missedBy: gone.id, to: to.id, types, since: req.since, until: req.until, limit: RECOVERY.max + 1 });
    const batch = events.slice(0, RECOVERY.max);
    const now = services.clock.now();
    for (const [i, event] of batch.entries()) {
      const dueAt = now + i * RECOVERY.spacingMs;
      const d = newDelivery(event, 'order_event');
      await tx.deliveries.insert({ ...d, id: newDeliveryId(now), nextAttemptAt: dueAt, createdAt: now, updatedAt: now, endpointId: to.id, endpointVersion: to.version, url: to.url });
    }
    const lastDueAt = batch.length === 0 ? null : now + (batch.length - 1) * RECOVERY.spacingMs;
    return { recovered: batch.length, lastDueAt, nextSince: events[RECOVERY.max]?.createdAt ?? null };
  });
}
