// Webhook endpoints and deliveries as the contract shapes (spec/management.openapi.yaml).
// Every field is always present; a field that does not apply is null. A secret appears only
// in the WithSecret shape, which only creation and rotation answer.
import type { components } from '../../../generated/types/management.ts';
import { MAX_DELIVERY_ATTEMPTS } from '../../../generated/vocabulary.ts';
import type { DeliveryDetailView, DeliveryView } from '../../domain/deliveries/deliveries.ts';
import type { EndpointView, EndpointWithSecretView } from '../../domain/endpoints/endpoints.ts';
import type { RotatedCallbackSecret } from '../../domain/endpoints/callback-secret.ts';
import type { AttemptRecord } from '../../domain/model.ts';
import { isoTime } from '../../domain/iso-time.ts';

type Schemas = components['schemas'];
export type WebhookEndpointBody = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecretBody = Schemas['WebhookEndpointWithSecret'];
export type DeliveryBody = Schemas['Delivery'];
export type DeliveryDetailBody = Schemas['DeliveryDetail'];
export type DeliveryAttemptBody = Schemas['DeliveryAttempt'];
export type CallbackSecretBody = Schemas['CallbackSecret'];

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

/** The contract's cap of 2048 characters, cut on a code point (the sender already keeps 2 KiB). */
const RESPONSE_BODY_MAX = 2048;
const capped = (text: string): string => (text.length <= RESPONSE_BODY_MAX ? text : Array.from(text).slice(0, RESPONSE_BODY_MAX).join(''));

export function presentEndpoint({ endpoint: e, environment, lastTest }: EndpointView): WebhookEndpointBody {
  return {
    id: e.id,
    environment,
    url: e.url,
    signatureScheme: e.signatureScheme,
    eventTypes: e.eventTypes === null ? null : [...e.eventTypes],
    maxPerSecond: e.maxPerSecond,
    active: e.active,
    version: e.version,
    createdAt: isoTime(e.createdAt),
    updatedAt: isoTime(e.updatedAt),
    disabledAt: isoOrNull(e.disabledAt),
    // Disabled before issue 69 recorded why: by request, the only way there was.
    disabledReason: e.active ? null : (e.disabledReason ?? 'requested'),
    failingSince: isoOrNull(e.failingSince),
    lastTest: lastTest === null ? null : { deliveryId: lastTest.deliveryId, eventId: lastTest.eventId, progress: lastTest.progress, at: isoTime(lastTest.at) },
  };
}

export function presentEndpointWithSecret(view: EndpointWithSecretView): WebhookEndpointWithSecretBody {
  return { ...presentEndpoint(view), secret: view.secret };
}

export function presentAttempt(a: AttemptRecord): DeliveryAttemptBody {
  return {
    number: a.number,
    cycle: a.cycle,
    startedAt: isoTime(a.startedAt),
    durationMs: a.durationMs,
    signatureTimestamp: a.signatureTimestamp,
    outcome: a.outcome,
    // An answer has a status and a body ("" when empty) but no error class; an error the opposite.
    statusCode: a.outcome === 'response' ? a.statusCode : null,
    errorClass: a.outcome === 'error' ? a.errorClass : null,
    responseBody: a.outcome === 'response' ? capped(a.responseBody ?? '') : null,
    success: a.success,
  };
}

export function presentDelivery({ delivery: d, eventType, progress, lastAttempt }: DeliveryView): DeliveryBody {
  return {
    id: d.id,
    kind: d.kind,
    eventId: d.eventId,
    eventType,
    endpointId: d.endpointId,
    endpointVersion: d.endpointVersion,
    url: d.url,
    state: d.state,
    progress,
    attemptCount: d.attemptCount,
    cycle: d.cycle,
    maxAttempts: MAX_DELIVERY_ATTEMPTS,
    // Scheduled only while queued or retrying: in flight (sending) or finished, nothing is due.
    nextAttemptAt: progress === 'queued' || progress === 'retrying' ? isoOrNull(d.nextAttemptAt) : null,
    createdAt: isoTime(d.createdAt),
    updatedAt: isoTime(d.updatedAt),
    deliveredAt: d.state === 'delivered' ? isoOrNull(d.deliveredAt) : null,
    orderId: d.orderId,
    merchantReference: d.merchantReference,
    transactionId: d.transactionId,
    lastResponse: lastAttempt === null ? null : presentAttempt(lastAttempt),
  };
}

export function presentDeliveryDetail(view: DeliveryDetailView): DeliveryDetailBody {
  return {
    ...presentDelivery(view),
    attempts: view.attempts.map(presentAttempt),
    // The event's own JSON, written by domain/events.ts in the contract's shape.
    payload: view.payload as DeliveryDetailBody['payload'],
  };
}

export function presentCallbackSecret(r: RotatedCallbackSecret): CallbackSecretBody {
  return { secret: r.secret, rotatedAt: isoTime(r.rotatedAt) };
}
