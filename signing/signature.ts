/**
 * The `Service-Signature` scheme shared by order webhooks and payout-completed callbacks.
 *
 *   Service-Signature: t=<Unix seconds>,v1=<64 lowercase hex>
 *   v1 = hex(HMAC-SHA256(key = UTF-8 bytes of the whole secret string,
 *                        message = "<t>." followed by the exact raw body bytes))
 *
 * The server signs with `signatureHeader`; a merchant's receiver checks with
 * `verifyWebhook` (client/webhooks/verify.ts) or, where only Web Crypto exists,
 * `verifyWebhookAsync` (client/webhooks/verify-async.ts). The rules both verifiers share
 * (header grammar, argument checks, signed bytes, comparison) are in scheme.ts; this module
 * adds the HMAC on `node:crypto`. It imports no layer, so the domain, the delivery engine and
 * the client helpers can all use it.
 */

import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { SECRET_PREFIX, assertRawBody, assertSigningSecret, assertTimestamp, secretKeyBytes } from './scheme.ts';
import type { RawBody } from './scheme.ts';
import { standardKeyBytes } from './standard.ts';

// The runtime-neutral half (constants, header parser, checks), for the server's existing imports.
export * from './scheme.ts';

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

/** Random bytes of a new secret: 33, so that the base64 text needs no padding. */
const SECRET_BYTES = 33;
const ALPHANUMERIC = /^[A-Za-z0-9]+$/;

/**
 * A new signing secret: `whsec_` followed by the base64 of 33 random bytes, drawn again until
 * the text is letters and digits only (about 4 draws). It is then the same text in the standard
 * and the URL-safe alphabet and needs no padding, so every Standard Webhooks library decodes it
 * as shown (spec/README.md, "Webhooks"); `Service-Signature` keys with the whole string anyway.
 */
export function generateSecret(): string {
  for (;;) {
    const text = randomBytes(SECRET_BYTES).toString('base64');
    if (ALPHANUMERIC.test(text)) return SECRET_PREFIX + text;
  }
}

/**
 * The `webhook-signature` entry of the Standard Webhooks scheme: `v1,<base64 HMAC-SHA256>` of
 * `<id>.<timestamp>.<raw body>`, keyed with the base64-decoded secret (signing/standard.ts).
 * @throws RangeError when the secret is not whsec_ + base64, or the timestamp is out of range.
 */
export function standardSignature(secret: string, id: string, timestamp: number, rawBody: RawBody): string {
  assertTimestamp(timestamp);
  assertRawBody(rawBody);
  const hmac = createHmac('sha256', hmacKey(secret, standardKeyBytes));
  hmac.update(`${id}.${timestamp}.`, 'utf8');
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return `v1,${hmac.digest('base64')}`;
}

/** @internal HMAC-SHA256 of `message` with `key` (raw bytes, or hmacKey's; the verifiers' common step). */
export function hmacSha256(key: Uint8Array | KeyObject, message: Uint8Array): Uint8Array {
  return createHmac('sha256', key).update(message).digest();
}

/**
 * Secrets whose key objects are kept, per way of deriving the key bytes (the oldest goes first):
 * enough for the endpoints one instance signs for in turn, at a few hundred bytes a key.
 */
export const KEYS_KEPT = 1024;
const keyObjects = new WeakMap<(secret: string) => Uint8Array, Map<string, KeyObject>>();

/**
 * @internal The HMAC key of `secret` (its bytes by `keyBytes`), imported once. createHmac given
 * raw key bytes imports them again on every call, which on Node 24 costs four times the HMAC of
 * a webhook itself (24 µs against 5 µs, 300-byte body); a delivery signs twice and a receiver
 * verifies with the same few secrets again and again. At most KEYS_KEPT secrets a derivation are
 * kept, in memory only, where the caller's own copy of each secret already is.
 */
export function hmacKey(secret: string, keyBytes: (secret: string) => Uint8Array): KeyObject {
  let kept = keyObjects.get(keyBytes);
  if (kept === undefined) keyObjects.set(keyBytes, (kept = new Map()));
  let key = kept.get(secret);
  if (key === undefined) {
    key = createSecretKey(keyBytes(secret));
    if (kept.size >= KEYS_KEPT) kept.delete(kept.keys().next().value!);
    kept.set(secret, key);
  }
  return key;
}

/**
 * @internal The raw 32-byte digest; callers have validated their inputs. The message is fed in
 * two parts (the same bytes as `signedPayload`) so the sender's hot path never copies a body.
 */
export function hmacDigest(secret: string, timestamp: number, rawBody: RawBody): Buffer {
  const hmac = createHmac('sha256', hmacKey(secret, secretKeyBytes));
  hmac.update(`${timestamp}.`, 'utf8');
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return hmac.digest();
}
