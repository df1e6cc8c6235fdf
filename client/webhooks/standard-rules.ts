/**
 * Steps 2-3 of a verification in the Standard Webhooks scheme (an endpoint whose
 * `signatureScheme` is `standard-webhooks` or `both`), with the codes of the Service-Signature
 * rules (rules.ts), in this order:
 *   2. `webhook-signature` and `webhook-timestamp` present, each exactly once   missing_signature / malformed_signature
 *   3. both well-formed (1-12 digits; space-separated `v1,<base64>`, other
 *      versions ignored, at least one v1)                                       malformed_signature
 *   3b. `webhook-id` present, non-empty, exactly once (it is signed)            missing_event_id / event_id_mismatch
 * Then, as for Service-Signature: 4. the 300 s tolerance, 5. some v1 equals
 * HMAC(base64-decoded secret, "<id>.<timestamp>.<raw body>"), 6. the body is JSON, 8. the
 * body's id equals `webhook-id`. Nothing here imports `node:`.
 */

import { WebhookVerificationError } from '../../signing/errors.ts';
import { SIGNATURE_HEADER, type RawBody } from '../../signing/scheme.ts';
import {
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  parseStandardSignatures,
  parseStandardTimestamp,
  standardKeyBytes,
  standardSignedPayload,
} from '../../signing/standard.ts';
import { singleHeader, type WebhookHeaders } from './headers.ts';

/** The schemes a receiver verifies (an endpoint in `both` sends the headers of the two). */
export type VerifiedScheme = 'service-signature' | 'standard-webhooks';

/** The scheme to verify: the one asked for, else Service-Signature when present, else Standard Webhooks when any of its headers is. */
export function schemeOf(input: { headers: WebhookHeaders; scheme?: VerifiedScheme }): VerifiedScheme {
  if (input.scheme !== undefined) {
    if (input.scheme !== 'service-signature' && input.scheme !== 'standard-webhooks') {
      throw new TypeError("scheme must be 'service-signature' or 'standard-webhooks'");
    }
    return input.scheme;
  }
  if (singleHeader(input.headers, SIGNATURE_HEADER).kind !== 'absent') return 'service-signature';
  const standard = [WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER, WEBHOOK_ID_HEADER].some((name) => singleHeader(input.headers, name).kind !== 'absent');
  return standard ? 'standard-webhooks' : 'service-signature';
}

export interface StandardHeaders {
  scheme: 'standard-webhooks';
  timestamp: number;
  signatures: Uint8Array[];
  eventId: string;
  keyOf(secret: string): Uint8Array<ArrayBuffer>;
  message: Uint8Array<ArrayBuffer>;
}

/** Steps 2-3b: the three headers, parsed. */
export function checkStandardHeaders(headers: WebhookHeaders, rawBody: RawBody): StandardHeaders {
  const signatures = parseStandardSignatures(required(headers, WEBHOOK_SIGNATURE_HEADER));
  const timestamp = parseStandardTimestamp(required(headers, WEBHOOK_TIMESTAMP_HEADER));
  const eventId = messageId(headers);
  return { scheme: 'standard-webhooks', timestamp, signatures, eventId, keyOf: standardKeyBytes, message: standardSignedPayload(eventId, timestamp, rawBody) };
}

function required(headers: WebhookHeaders, name: string): string {
  const found = singleHeader(headers, name);
  if (found.kind === 'absent') throw new WebhookVerificationError('missing_signature', `the request has no ${name} header`);
  if (found.kind === 'several') {
    throw new WebhookVerificationError('malformed_signature', `the request carries ${found.count} ${name} headers; exactly one is required`);
  }
  return found.value;
}

function messageId(headers: WebhookHeaders): string {
  const found = singleHeader(headers, WEBHOOK_ID_HEADER);
  if (found.kind === 'several') {
    throw new WebhookVerificationError('event_id_mismatch', `the request carries ${found.count} ${WEBHOOK_ID_HEADER} headers; exactly one is required`);
  }
  const id = found.kind === 'one' ? found.value.trim() : '';
  if (id === '') throw new WebhookVerificationError('missing_event_id', `the request has no ${WEBHOOK_ID_HEADER} header, or it is empty`);
  // A fetch Headers object joins repeated headers with ", ".
  if (id.includes(',')) throw new WebhookVerificationError('event_id_mismatch', `the ${WEBHOOK_ID_HEADER} header holds several values; exactly one is required`);
  return id;
}
