// The signed request of one delivery attempt. The body is the event's stored payload, byte for
// byte (the exact text that was signed is the text that is sent); the signature carries a fresh
// `t` for every attempt, and the event id stays the same across attempts and manual retries.
import { deliveryHeadersWith, WEBHOOK_USER_AGENT } from '../../signing/delivery.ts';
import { HmacKeys } from '../../signing/hmac-keys.ts';
import type { EventRecord, SignatureScheme } from '../domain/model.ts';

/**
 * Secrets whose key objects the sender keeps, per way of deriving the key bytes (the oldest goes
 * first): enough for the endpoints one instance signs for in turn, at a few hundred bytes a key.
 * A measured win (signing/hmac-keys.ts): a delivery signs twice, once a scheme.
 */
export const SENDER_KEYS_KEPT = 1024;
/** @internal Exported for its test. */
export const senderKeys = new HmacKeys(SENDER_KEYS_KEPT);

/** The `User-Agent` of every delivery (spec/webhooks.asyncapi.yaml). */
export const USER_AGENT = WEBHOOK_USER_AGENT;

export interface DeliveryRequest {
  /** The exact bytes to send (UTF-8 of this string); the signature covers them. */
  body: string;
  headers: Record<string, string>;
  /** `t` of the signature: Unix seconds of this attempt (stored with the attempt). */
  timestamp: number;
}

/**
 * Builds the request of one attempt at `nowMs` (the attempt's own time, never the event's
 * `createdAt`). `secret` is the opened signing secret; it only lives in memory for this call and
 * the signature it produces must never be logged. `scheme` is the endpoint's, read at each
 * attempt (a change applies from the next one); the event id is `webhook-id` as well.
 */
export function buildDeliveryRequest(event: EventRecord, secret: string, nowMs: number, scheme: SignatureScheme = 'service-signature'): DeliveryRequest {
  const body = event.payload;
  const timestamp = Math.floor(nowMs / 1000);
  return { body, timestamp, headers: deliveryHeadersWith(senderKeys, secret, event.id, body, timestamp, scheme) };
}
