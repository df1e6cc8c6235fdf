/**
 * The runtime-neutral half of the `Service-Signature` scheme: constants, the strict header
 * parser, the argument checks, the signed bytes and a constant-time comparison. It imports
 * nothing (no `node:crypto`, no `Buffer`), so the Node signer/verifier (signature.ts) and the
 * Web Crypto verifier (web.ts) take their rules from one place, and the `payments-webhooks/web`
 * entry runs where only Web Crypto exists.
 */

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
export const MAX_TIMESTAMP = 999_999_999_999;
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


const utf8Encoder = new TextEncoder();

/** Length of a secret as the HMAC sees it: bytes of its UTF-8 encoding. */
export function secretByteLength(secret: string): number {
  return utf8Encoder.encode(secret).byteLength;
}

/** The HMAC key: the whole secret string, `whsec_` prefix included, as UTF-8 bytes. */
export function secretKeyBytes(secret: string): Uint8Array<ArrayBuffer> {
  return utf8Encoder.encode(secret);
}

/** The HMAC message: `<t>.` followed by the exact raw body bytes (a string body as UTF-8). */
export function signedPayload(timestamp: number, rawBody: RawBody): Uint8Array<ArrayBuffer> {
  const prefix = utf8Encoder.encode(`${timestamp}.`);
  const body = typeof rawBody === 'string' ? utf8Encoder.encode(rawBody) : rawBody;
  const out = new Uint8Array(prefix.byteLength + body.byteLength);
  out.set(prefix, 0);
  out.set(body, prefix.byteLength);
  return out;
}

/** 64 lowercase hex characters of a 32-byte digest. */
export function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** Bytes of a hex string the parser has already checked (even length, lowercase hex). */
export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
  return out;
}

/** 0-9 are 48-57, a-f are 97-102. */
const nibble = (code: number): number => (code <= 57 ? code - 48 : code - 87);

/**
 * Constant-time equality of two byte strings: every byte is compared whatever the earlier
 * ones were, so the time does not tell an attacker how much of a guess was right. Lengths
 * are not secret here (a digest is always 32 bytes).
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** A string or bytes; anything else (a parsed body) is a programming error. */
export function assertRawBody(rawBody: unknown): asserts rawBody is RawBody {
  if (typeof rawBody !== 'string' && !isUint8Array(rawBody)) {
    throw new TypeError(
      'rawBody must be the raw request body as a string or a Uint8Array/Buffer, exactly as received; ' +
        'a parsed or re-serialized body cannot be verified (read the body before any JSON middleware)',
    );
  }
}

export function assertSigningSecret(secret: unknown): asserts secret is string {
  if (typeof secret !== 'string') {
    throw new TypeError('the signing secret must be a string');
  }
  if (secretByteLength(secret) < MIN_SECRET_BYTES) {
    throw new RangeError(`the signing secret is shorter than ${MIN_SECRET_BYTES} bytes`);
  }
}

export function assertTimestamp(timestamp: unknown): asserts timestamp is number {
  if (typeof timestamp !== 'number' || !Number.isInteger(timestamp) || timestamp < 0 || timestamp > MAX_TIMESTAMP) {
    throw new RangeError('the signature timestamp must be an integer number of Unix seconds from 0 to 999999999999');
  }
}

/**
 * A Uint8Array (or Buffer) of any realm: `instanceof` alone refuses bytes made in another
 * realm (a vm context, an iframe, a test sandbox), which are bytes all the same.
 */
function isUint8Array(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array || (ArrayBuffer.isView(value) && Object.prototype.toString.call(value) === '[object Uint8Array]');
}

function malformed(message: string): WebhookVerificationError {
  return new WebhookVerificationError('malformed_signature', message);
}
