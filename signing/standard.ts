/**
 * The runtime-neutral half of the Standard Webhooks scheme (standard-webhooks v1.0.0), the
 * second signature scheme an endpoint can choose (spec: WebhookSignatureScheme):
 *
 *   webhook-id: <event id>            webhook-timestamp: <Unix seconds of the attempt>
 *   webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")> [v1,... ...]
 *
 * The key is the base64-decoded part of the endpoint's secret after `whsec_` (spec/README.md,
 * "Webhooks"): the same secret as `Service-Signature`, which keys with the whole string instead.
 * Like scheme.ts this imports nothing from `node:`, so both verifiers and the signers share it.
 */

import type { components } from '../generated/types/management.ts';
import { WebhookVerificationError } from './errors.ts';
import { SECRET_PREFIX, type RawBody } from './scheme.ts';

/** The headers an endpoint's deliveries carry (spec: WebhookSignatureScheme). */
export type SignatureScheme = components['schemas']['WebhookSignatureScheme'];

export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

const TIMESTAMP_PATTERN = /^[0-9]{1,12}$/;
/** A base64 HMAC-SHA256: 32 bytes are 43 characters and one `=`. */
const V1_PATTERN = /^[A-Za-z0-9+/]{43}=$/;
const VERSION_PATTERN = /^v[0-9][a-z0-9]*$/;
const UNKNOWN_VALUE_PATTERN = /^[\x21-\x7e]+$/;
/** Either alphabet, padding optional (spec/README.md: older secrets are base64url). */
const SECRET_BODY_PATTERN = /^[A-Za-z0-9+/_-]+={0,2}$/;
const SURROUNDING_OWS = /^[ \t]+|[ \t]+$/g;

const utf8Encoder = new TextEncoder();

/**
 * The HMAC key of a Standard Webhooks secret: the part after an optional `whsec_`, base64
 * decoded (the standard or the URL-safe alphabet, with or without padding).
 * @throws RangeError when that part is not base64 or decodes to nothing.
 */
export function standardKeyBytes(secret: string): Uint8Array<ArrayBuffer> {
  const text = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const bytes = SECRET_BODY_PATTERN.test(text) ? fromBase64(text.replace(/-/g, '+').replace(/_/g, '/')) : null;
  if (bytes === null || bytes.byteLength === 0) {
    throw new RangeError('a Standard Webhooks secret is whsec_ (optional) followed by base64 text');
  }
  return bytes;
}

/** The signed message: `<id>.<timestamp>.` followed by the exact raw body bytes. */
export function standardSignedPayload(id: string, timestamp: number, rawBody: RawBody): Uint8Array<ArrayBuffer> {
  const prefix = utf8Encoder.encode(`${id}.${timestamp}.`);
  const body = typeof rawBody === 'string' ? utf8Encoder.encode(rawBody) : rawBody;
  const out = new Uint8Array(prefix.byteLength + body.byteLength);
  out.set(prefix, 0);
  out.set(body, prefix.byteLength);
  return out;
}

/**
 * Parses `webhook-timestamp` strictly: 1 to 12 decimal digits.
 * @throws WebhookVerificationError `malformed_signature`.
 */
export function parseStandardTimestamp(value: string): number {
  const trimmed = value.replace(SURROUNDING_OWS, '');
  if (!TIMESTAMP_PATTERN.test(trimmed)) {
    throw new WebhookVerificationError('malformed_signature', `${WEBHOOK_TIMESTAMP_HEADER} must be 1 to 12 decimal digits (Unix seconds)`);
  }
  return Number(trimmed);
}

/**
 * Parses `webhook-signature`: space-separated `<version>,<signature>` entries. Every `v1` must
 * be the base64 of 32 bytes; other versions (`v1a` of the asymmetric draft) are ignored; at
 * least one `v1` is required. Answers the `v1` digests, in header order.
 * @throws WebhookVerificationError `malformed_signature`.
 */
export function parseStandardSignatures(value: string): Uint8Array[] {
  const trimmed = value.replace(SURROUNDING_OWS, '');
  if (trimmed === '') throw malformed(`the ${WEBHOOK_SIGNATURE_HEADER} header is empty`);
  const digests: Uint8Array[] = [];
  trimmed.split(' ').forEach((entry, i) => {
    const comma = entry.indexOf(',');
    const version = entry.slice(0, comma);
    const signature = entry.slice(comma + 1);
    if (comma <= 0 || !VERSION_PATTERN.test(version)) {
      throw malformed(`entry ${i + 1} of ${WEBHOOK_SIGNATURE_HEADER} is not <version>,<signature> (entries are separated by one space)`);
    }
    if (version !== 'v1') {
      if (!UNKNOWN_VALUE_PATTERN.test(signature)) throw malformed(`entry ${i + 1} of ${WEBHOOK_SIGNATURE_HEADER} has an empty or non-ASCII signature`);
      return;
    }
    if (!V1_PATTERN.test(signature)) throw malformed(`a v1 entry of ${WEBHOOK_SIGNATURE_HEADER} must be the base64 of 32 bytes (44 characters)`);
    digests.push(fromBase64(signature) as Uint8Array);
  });
  if (digests.length === 0) throw malformed(`the ${WEBHOOK_SIGNATURE_HEADER} header has no v1 entry`);
  return digests;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

// Decoded by hand rather than with atob: the Web Crypto entry runs where the language, text
// codecs and crypto.subtle are all there is (client/webhooks/vectors.test.ts).

/** The bytes of standard base64 text (padding optional), or null when it is not base64. */
function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  const digits = text.replace(/=+$/, '');
  if (digits.length % 4 === 1 || text.length - digits.length > 2) return null;
  const out = new Uint8Array(Math.floor((digits.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let o = 0;
  for (const c of digits) {
    const v = ALPHABET.indexOf(c);
    if (v < 0) return null;
    value = (value << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (value >> bits) & 255;
    }
  }
  return out;
}

function malformed(message: string): WebhookVerificationError {
  return new WebhookVerificationError('malformed_signature', message);
}
