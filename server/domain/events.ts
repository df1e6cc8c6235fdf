// Recording events: the outbox. An event and, when the environment has an active endpoint,
// its delivery are written in the same transaction as the state change that caused them,
// so an accepted change never loses its notification and a rolled-back one never sends it.
import type { Tx } from './store.ts';
import type { components } from '../../generated/types/events.ts';
import type { DeliveryKind, EnvironmentName, EventRecord, OrderEventType, UntargetedDelivery } from './model.ts';
import type { Scope, Services } from './context.ts';
import { newDeliveryId, newEventId } from './ids.ts';
import { isoTime } from './iso-time.ts';

type Events = components['schemas'];
export type OrderEvent = Events['OrderCreatedEvent'] | Events['OrderPaidEvent'] | Events['OrderPaymentReviewRequiredEvent'];
export type OrderEventData = Events['OrderEventData'];
export type WebhookTestEvent = Events['WebhookTestEvent'];
export type PayoutCompletedNotification = Events['PayoutCompletedNotification'];

export const API_VERSION: OrderEvent['apiVersion'] = 'v2';

export interface NewOrderEvent {
  type: OrderEventType;
  data: OrderEventData;
  orderId: string;
  merchantReference: string;
}

// The builders below produce the exact bytes that are signed and sent. Each returns the
// contract's type (generated/types/events.ts from the AsyncAPI document), so a field the
// contract does not have, or one it requires that is missing, fails the type check. Key order
// is part of the signed bytes; keep it fixed.

type OrderEventStatus = OrderEventData['status'];

/** The data narrowed to the status its event type carries; anything else is a bug upstream. */
function withStatus<S extends OrderEventStatus>(type: OrderEventType, data: OrderEventData, status: S): OrderEventData & { status: S } {
  if (data.status !== status) throw new Error(`${type} carries status ${status}, not ${data.status}`);
  return data as OrderEventData & { status: S };
}

/** An order event's envelope: `order.created`, `order.paid`, `order.payment_review_required`. */
export function orderEventBody(id: string, type: OrderEventType, createdAt: number, data: OrderEventData): OrderEvent {
  const at = isoTime(createdAt);
  switch (type) {
    case 'order.created':
      return { id, type, apiVersion: API_VERSION, createdAt: at, data: withStatus(type, data, 'open') };
    case 'order.paid':
      return { id, type, apiVersion: API_VERSION, createdAt: at, data: withStatus(type, data, 'paid') };
    case 'order.payment_review_required': {
      const review = withStatus(type, data, 'review_required');
      if (review.reviewReason === undefined) throw new Error(`${type} needs a reviewReason`);
      return { id, type, apiVersion: API_VERSION, createdAt: at, data: { ...review, reviewReason: review.reviewReason } };
    }
  }
}

/** The `webhook.test` envelope. */
export function webhookTestBody(id: string, createdAt: number, environment: EnvironmentName): WebhookTestEvent {
  return { id, type: 'webhook.test', apiVersion: API_VERSION, createdAt: isoTime(createdAt), data: { environment } };
}

/** The payout-completed notification (it has no envelope and no id; Service-Event-Id names it). */
export function payoutCompletedBody(payout: { transactionId: string; thirdPartyId: string; amount: string; status: PayoutCompletedNotification['status'] }): PayoutCompletedNotification {
  return {
    transactionId: payout.transactionId,
    thirdPartyId: payout.thirdPartyId,
    // Stored amounts have at most 15 significant digits, so the JSON number is exact.
    amount: Number(payout.amount),
    status: payout.status,
  };
}

async function insertDelivery(
  tx: Tx,
  event: EventRecord,
  kind: DeliveryKind,
  target: { endpointId: string | null; endpointVersion: number | null; url: string },
): Promise<string> {
  const d = newDelivery(event, kind);
  await tx.deliveries.insert({ ...d, endpointId: target.endpointId, endpointVersion: target.endpointVersion, url: target.url });
  return d.id;
}

/** A new delivery of the event, due at once, without its target. */
export function newDelivery(event: EventRecord, kind: DeliveryKind): UntargetedDelivery {
  return {
    id: newDeliveryId(event.createdAt),
    environmentId: event.environmentId,
    eventId: event.id,
    kind,
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
  };
}

/** An order event of the environment and its delivery, not yet written nor targeted. */
export function orderEventRecords(services: Services, scope: Scope, e: NewOrderEvent): { event: EventRecord; delivery: UntargetedDelivery } {
  const createdAt = services.clock.now();
  const id = newEventId(createdAt);
  const event: EventRecord = {
    id,
    environmentId: scope.environmentId,
    type: e.type,
    payload: JSON.stringify(orderEventBody(id, e.type, createdAt, e.data)),
    orderId: e.orderId,
    merchantReference: e.merchantReference,
    transactionId: null,
    createdAt,
  };
  return { event, delivery: newDelivery(event, 'order_event') };
}

/**
 * Records an order event of the environment and prepares its delivery when an active endpoint
 * exists (without one, no delivery is created, but the event stays in the feed).
 */
export async function recordOrderEvent(tx: Tx, services: Services, scope: Scope, e: NewOrderEvent): Promise<{ event: EventRecord; deliveryId: string | null }> {
  const { event, delivery } = orderEventRecords(services, scope, e);
  // To the environment's active endpoint, if it has one.
  const deliveryId = (await tx.deliveries.insertWithEvent(event, delivery)) ? delivery.id : null;
  return { event, deliveryId };
}

/**
 * A `webhook.test` event with no delivery (POST /sandbox/events/test): only the event stream
 * carries it, so `payments-webhooks trigger webhook.test` reaches `listen` without an endpoint.
 */
export async function recordStreamTestEvent(services: Services, scope: Scope): Promise<WebhookTestEvent> {
  const createdAt = services.clock.now();
  const id = newEventId(createdAt);
  const body = webhookTestBody(id, createdAt, scope.environment);
  const event: EventRecord = {
    id,
    environmentId: scope.environmentId,
    type: 'webhook.test',
    payload: JSON.stringify(body),
    orderId: null,
    merchantReference: null,
    transactionId: null,
    createdAt,
  };
  await services.store.transaction((tx) => tx.events.insert(event));
  return body;
}

/** `webhook.test` to the given active endpoint: same signed path, no order. */
export async function recordTestEvent(
  tx: Tx,
  services: Services,
  scope: Scope,
  endpoint: { id: string; version: number; url: string },
): Promise<{ event: EventRecord; deliveryId: string }> {
  const createdAt = services.clock.now();
  const id = newEventId(createdAt);
  const event: EventRecord = {
    id,
    environmentId: scope.environmentId,
    type: 'webhook.test',
    payload: JSON.stringify(webhookTestBody(id, createdAt, scope.environment)),
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
  payout: Parameters<typeof payoutCompletedBody>[0] & { notifyUrl: string },
): Promise<{ event: EventRecord; deliveryId: string }> {
  const createdAt = services.clock.now();
  const id = newEventId(createdAt);
  const event: EventRecord = {
    id,
    environmentId: scope.environmentId,
    type: 'payout.completed',
    payload: JSON.stringify(payoutCompletedBody(payout)),
    orderId: null,
    merchantReference: null,
    transactionId: payout.transactionId,
    createdAt,
  };
  await tx.events.insert(event);
  const deliveryId = await insertDelivery(tx, event, 'payout_callback', { endpointId: null, endpointVersion: null, url: payout.notifyUrl });
  return { event, deliveryId };
}
