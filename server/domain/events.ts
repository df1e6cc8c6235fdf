// Recording events: the outbox. An event and, when the environment has an active endpoint,
// its delivery are written in the same transaction as the state change that caused them,
// so an accepted change never loses its notification and a rolled-back one never sends it.
import type { Tx } from '../store/types.ts';
import type { DeliveryKind, EventRecord, EventType } from './model.ts';
import type { Scope, Services } from './context.ts';
import { newDeliveryId, newEventId } from './ids.ts';

export const API_VERSION = 'v2';

export interface NewEvent {
  type: EventType;
  data: Record<string, unknown>;
  orderId?: string;
  merchantReference?: string;
}

function envelope(id: string, type: EventType, createdAt: number, data: Record<string, unknown>): string {
  // Key order is part of the bytes that are signed; keep it fixed.
  return JSON.stringify({ id, type, apiVersion: API_VERSION, createdAt: new Date(createdAt).toISOString(), data });
}

async function insertDelivery(
  tx: Tx,
  event: EventRecord,
  kind: DeliveryKind,
  target: { endpointId: string | null; endpointVersion: number | null; url: string },
): Promise<string> {
  const id = newDeliveryId(event.createdAt);
  await tx.deliveries.insert({
    id,
    environmentId: event.environmentId,
    eventId: event.id,
    kind,
    endpointId: target.endpointId,
    endpointVersion: target.endpointVersion,
    url: target.url,
    state: 'pending',
    attemptCount: 0,
    cycle: 1,
    nextAttemptAt: event.createdAt,
    leaseOwner: null,
    leaseExpiresAt: null,
    orderId: event.orderId,
    merchantReference: event.merchantReference,
    transactionId: event.transactionId,
    createdAt: event.createdAt,
    updatedAt: event.createdAt,
    deliveredAt: null,
  });
  return id;
}

/**
 * Records an order event of the environment and prepares its delivery when an active endpoint
 * exists (without one, no delivery is created, but the event stays in the feed).
 */
export async function recordOrderEvent(tx: Tx, services: Services, scope: Scope, e: NewEvent): Promise<{ event: EventRecord; deliveryId: string | null }> {
  const createdAt = services.clock.now();
  const id = newEventId();
  const event: EventRecord = {
    id,
    environmentId: scope.environmentId,
    type: e.type,
    payload: envelope(id, e.type, createdAt, e.data),
    orderId: e.orderId ?? null,
    merchantReference: e.merchantReference ?? null,
    transactionId: null,
    createdAt,
  };
  await tx.events.insert(event);
  const endpoint = await tx.endpoints.getActive(scope.environmentId);
  const deliveryId = endpoint
    ? await insertDelivery(tx, event, 'order_event', { endpointId: endpoint.id, endpointVersion: endpoint.version, url: endpoint.url })
    : null;
  return { event, deliveryId };
}

/** `webhook.test` to the given active endpoint: same signed path, no order. */
export async function recordTestEvent(
  tx: Tx,
  services: Services,
  scope: Scope,
  endpoint: { id: string; version: number; url: string },
): Promise<{ event: EventRecord; deliveryId: string }> {
  const createdAt = services.clock.now();
  const id = newEventId();
  const event: EventRecord = {
    id,
    environmentId: scope.environmentId,
    type: 'webhook.test',
    payload: envelope(id, 'webhook.test', createdAt, { environment: scope.environment }),
    orderId: null,
    merchantReference: null,
    transactionId: null,
    createdAt,
  };
  await tx.events.insert(event);
  const deliveryId = await insertDelivery(tx, event, 'webhook_test', { endpointId: endpoint.id, endpointVersion: endpoint.version, url: endpoint.url });
  return { event, deliveryId };
}

/** The payout-completed notification to the payout's notifyUrl, signed with the callback secret. */
export async function recordPayoutCallback(
  tx: Tx,
  services: Services,
  scope: Scope,
  payout: { transactionId: string; thirdPartyId: string; amount: string; status: 'success' | 'cancelled'; notifyUrl: string },
): Promise<{ event: EventRecord; deliveryId: string }> {
  const createdAt = services.clock.now();
  const id = newEventId();
  const event: EventRecord = {
    id,
    environmentId: scope.environmentId,
    type: 'payout.completed',
    payload: JSON.stringify({
      transactionId: payout.transactionId,
      thirdPartyId: payout.thirdPartyId,
      // Stored amounts have at most 15 significant digits, so the JSON number is exact.
      amount: Number(payout.amount),
      status: payout.status,
    }),
    orderId: null,
    merchantReference: null,
    transactionId: payout.transactionId,
    createdAt,
  };
  await tx.events.insert(event);
  const deliveryId = await insertDelivery(tx, event, 'payout_callback', { endpointId: null, endpointVersion: null, url: payout.notifyUrl });
  return { event, deliveryId };
}
