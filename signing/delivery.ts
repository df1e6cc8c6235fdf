// The headers of a signed delivery, the same for the service's deliveries
// (server/delivery/sign.ts) and for what `payments-webhooks listen` forwards to a local
// receiver (client/cli/forwarder.ts): one place, so both sign exactly alike.
import type { HmacKeys } from './hmac-keys.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, receiverKeys, signatureHeaderWith, standardSignatureWith } from './signature.ts';
import { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER, type SignatureScheme } from './standard.ts';

/** The `User-Agent` of every delivery (spec/webhooks.asyncapi.yaml). */
export const WEBHOOK_USER_AGENT = 'PaymentsService-Webhooks/2.0';

/**
 * The request headers of one delivery attempt of `body` (the exact bytes sent), signed with
 * `secret` at `timestamp` (Unix seconds of this attempt, not the event's createdAt) in the
 * endpoint's `scheme`: the `Service-*` pair, the Standard Webhooks `webhook-*` trio, or both.
 */
export function deliveryHeaders(secret: string, eventId: string, body: string, timestamp: number, scheme: SignatureScheme = 'service-signature'): Record<string, string> {
  return deliveryHeadersWith(receiverKeys, secret, eventId, body, timestamp, scheme);
}

/** @internal `deliveryHeaders` with the key objects kept in `keys` (the service's sender keeps its own). */
export function deliveryHeadersWith(keys: HmacKeys, secret: string, eventId: string, body: string, timestamp: number, scheme: SignatureScheme): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (scheme !== 'standard-webhooks') {
    headers[EVENT_ID_HEADER] = eventId;
    headers[SIGNATURE_HEADER] = signatureHeaderWith(keys, secret, timestamp, body);
  }
  if (scheme !== 'service-signature') {
    headers[WEBHOOK_ID_HEADER] = eventId;
    headers[WEBHOOK_TIMESTAMP_HEADER] = String(timestamp);
    headers[WEBHOOK_SIGNATURE_HEADER] = standardSignatureWith(keys, secret, eventId, timestamp, body);
  }
  headers['User-Agent'] = WEBHOOK_USER_AGENT;
  return headers;
}
