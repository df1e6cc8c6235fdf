// The headers of a signed delivery, the same for the service's deliveries
// (server/delivery/sign.ts) and for what `payments-webhooks listen` forwards to a local
// receiver (client/cli/forwarder.ts): one place, so both sign exactly alike.
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature.ts';

/** The `User-Agent` of every delivery (spec/webhooks.asyncapi.yaml). */
export const WEBHOOK_USER_AGENT = 'PaymentsService-Webhooks/2.0';

/**
 * The request headers of one delivery attempt of `body` (the exact bytes sent), signed with
 * `secret` at `timestamp` (Unix seconds of this attempt, not the event's createdAt).
 */
export function deliveryHeaders(secret: string, eventId: string, body: string, timestamp: number): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    [EVENT_ID_HEADER]: eventId,
    [SIGNATURE_HEADER]: signatureHeader(secret, timestamp, body),
    'User-Agent': WEBHOOK_USER_AGENT,
  };
}
