/**
 * The `Service-Signature` scheme shared by order webhooks and payout-completed callbacks.
 *
 *   Service-Signature: t=<Unix seconds>,v1=<64 lowercase hex>
 *   v1 = hex(HMAC-SHA256(key = UTF-8 bytes of the whole secret string,
 *                        message = "<t>." followed by the exact raw body bytes))
 *
 * The server signs with `signatureHeader`; a merchant's receiver checks with
 * `verifyWebhook` (client/webhooks/verify.ts), which uses `parseSignatureHeader` and the
 * same HMAC. This module is the one place both sides take the scheme from: it imports no
 * layer, so the domain, the delivery engine and the client helpers can all use it.
 */

import { createHmac, randomBytes } from 'node:crypto';
import { WebhookVerificationError } from './errors.ts';

/** Header carrying `t=<Unix seconds>,v1=<hex HMAC>`. */
export const SIGNATURE_HEADER = 'Service-Signature';
/** Header carrying the event id; it equals the `id` of an order webhook's JSON body. */
export const EVENT_ID_HEADER = 'Service-Event-Id';
/** Largest accepted difference, in seconds, between the receiver's clock and `t`. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
/** Shortest accepted secret, in bytes of its UTF-8 encoding. */
export const MIN_SECRET_BYTES = 32;
/** Prefix of the secrets made by `generateSecret`. The prefix is part of the HMAC key. */
export const SECRET_PREFIX = 'whsec_';

/** Largest `t` a header can carry: 12 digits. */
const MAX_TIMESTAMP = 999_999_999_999;
const TIMESTAMP_PATTERN = /^[0-9]{1,12}$/;
const V1_PATTERN = /^[0-9a-f]{64}$/;
const SCHEME_PATTERN = /^[a-z][a-z0-9]*$/;
const UNKNOWN_VALUE_PATTERN = /^[\x21-\x7e]+$/;
const SURROUNDING_OWS = /^[ \t]+|[ \t]+$/g;

export type RawBody = string | Uint8Array;

export interface ParsedSignatureHeader {
  /** `t`: Unix seconds of the send attempt (not the event's `createdAt`). */
  timestamp: number;
  /** Every `v1` value, in header order (a sender may send several while rotating). */
  signatures: string[];
}

/**
 * HMAC-SHA256 of `<timestamp>.<raw body>` as 64 lowercase hex characters.
 *
 * A string body is hashed as its UTF-8 bytes; a `Uint8Array`/`Buffer` body is hashed
 * byte for byte, never decoded and re-encoded. Sign exactly the bytes you send.
 *
 * @throws RangeError when the secret is shorter than `MIN_SECRET_BYTES` UTF-8 bytes or
 *   the timestamp is not an integer from 0 to 999999999999 (12 digits).
 * @throws TypeError when `rawBody` is neither a string nor a `Uint8Array`.
 */
export function computeSignature(secret: string, timestamp: number, rawBody: RawBody): string {
  assertSigningSecret(secret);
  assertTimestamp(timestamp);
  assertRawBody(rawBody);
  return hmacDigest(secret, timestamp, rawBody).toString('hex');
}

/** The full header value, `t=<timestamp>,v1=<computeSignature(...)>`. Same checks as `computeSignature`. */
export function signatureHeader(secret: string, timestamp: number, rawBody: RawBody): string {
  return `t=${timestamp},v1=${computeSignature(secret, timestamp, rawBody)}`;
}

/**
 * Parses a `Service-Signature` value strictly.
 *
 * Grammar: comma-separated `key=value` elements with no whitespace inside the value.
 * Leading and trailing spaces or tabs of the whole value are removed first (HTTP
 * "optional whitespace", which HTTP parsers strip anyway); nothing else is tolerated.
 * - exactly one `t`, 1 to 12 decimal digits;
 * - one or more `v1`, each exactly 64 lowercase hex characters;
 * - other schemes (`v0=...`, lowercase letters and digits) are ignored, so a sender can
 *   add one later; their value must still be non-empty visible ASCII.
 * Empty elements (`,,`, a trailing comma), a missing `=`, a duplicate `t`, no `t` or
 * no `v1` make the header malformed.
 *
 * @throws WebhookVerificationError with code `malformed_signature`.
 */
export function parseSignatureHeader(value: string): ParsedSignatureHeader {
  if (typeof value !== 'string') {
    throw malformed('the Service-Signature header is not a string');
  }
  const trimmed = value.replace(SURROUNDING_OWS, '');
  if (trimmed === '') {
    throw malformed('the Service-Signature header is empty');
  }
  let timestamp: number | undefined;
  const signatures: string[] = [];
  const elements = trimmed.split(',');
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i] ?? '';
    const position = `element ${i + 1} of the Service-Signature header`;
    const eq = element.indexOf('=');
    if (eq <= 0) {
      throw malformed(`${position} is not a key=value pair (whitespace and empty elements are not allowed)`);
    }
    const key = element.slice(0, eq);
    const item = element.slice(eq + 1);
    if (!SCHEME_PATTERN.test(key)) {
      throw malformed(`${position} has a key that is not lowercase letters and digits`);
    }
    if (key === 't') {
      if (timestamp !== undefined) {
        throw malformed('the Service-Signature header has more than one t= element');
      }
      if (!TIMESTAMP_PATTERN.test(item)) {
        throw malformed('t= in the Service-Signature header must be 1 to 12 decimal digits (Unix seconds)');
      }
      timestamp = Number(item);
    } else if (key === 'v1') {
      if (!V1_PATTERN.test(item)) {
        throw malformed('v1= in the Service-Signature header must be exactly 64 lowercase hexadecimal characters');
      }
      signatures.push(item);
    } else if (!UNKNOWN_VALUE_PATTERN.test(item)) {
      throw malformed(`${position} (an unknown scheme) has an empty value or one with whitespace or non-ASCII characters`);
    }
  }
  if (timestamp === undefined) {
    throw malformed('the Service-Signature header has no t= element');
  }
  if (signatures.length === 0) {
    throw malformed('the Service-Signature header has no v1= signature');
  }
  return { timestamp, signatures };
}

/** A new signing secret: `whsec_` followed by the base64url (no padding) of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** Length of a secret as the HMAC sees it: bytes of its UTF-8 encoding. */
export function secretByteLength(secret: string): number {
  return Buffer.byteLength(secret, 'utf8');
}

// ---- internal helpers (shared with verify.ts, not re-exported by index.ts) ----------

/** @internal The raw 32-byte digest; callers have validated their inputs. */
export function hmacDigest(secret: string, timestamp: number, rawBody: RawBody): Buffer {
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  hmac.update(`${timestamp}.`, 'utf8');
  if (typeof rawBody === 'string') {
    hmac.update(rawBody, 'utf8');
  } else {
    hmac.update(rawBody);
  }
  return hmac.digest();
}

/** @internal */
export function assertRawBody(rawBody: unknown): asserts rawBody is RawBody {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError(
      'rawBody must be the raw request body as a string or a Uint8Array/Buffer, exactly as received; ' +
        'a parsed or re-serialized body cannot be verified (read the body before any JSON middleware)',
    );
  }
}

function assertSigningSecret(secret: unknown): asserts secret is string {
  if (typeof secret !== 'string') {
    throw new TypeError('the signing secret must be a string');
  }
  if (secretByteLength(secret) < MIN_SECRET_BYTES) {
    throw new RangeError(`the signing secret is shorter than ${MIN_SECRET_BYTES} bytes`);
  }
}

function assertTimestamp(timestamp: unknown): asserts timestamp is number {
  if (typeof timestamp !== 'number' || !Number.isInteger(timestamp) || timestamp < 0 || timestamp > MAX_TIMESTAMP) {
    throw new RangeError('the signature timestamp must be an integer number of Unix seconds from 0 to 999999999999');
  }
}

function malformed(message: string): WebhookVerificationError {
  return new WebhookVerificationError('malformed_signature', message);
}
