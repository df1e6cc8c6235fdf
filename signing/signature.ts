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

import { createHmac, randomBytes, type KeyObject } from 'node:crypto';
import { HmacKeys } from './hmac-keys.ts';
import { SECRET_PREFIX, assertRawBody, assertSigningSecret, assertTimestamp, secretKeyBytes } from './scheme.ts';
import type { RawBody } from './scheme.ts';
import { standardKeyBytes } from './standard.ts';

// The runtime-neutral half (constants, header parser, checks), for the server's existing imports.
export * from './scheme.ts';

/** Secrets a receiver verifies with: its endpoint's, and while it rotates, the one before. */
export const RECEIVER_KEYS_KEPT = 2;

/**
 * @internal The key objects of the merchant kit's own HMACs (verifyWebhook, and the signing
 * functions below used for tests and `listen`): a receiver's one or two secrets; any further
 * secret is imported on each use. The service's sender keeps its own (server/delivery/sign.ts).
 */
export const receiverKeys = new HmacKeys(RECEIVER_KEYS_KEPT);

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
  return computeSignatureWith(receiverKeys, secret, timestamp, rawBody);
}

/** @internal `computeSignature` with the key objects kept in `keys`. */
export function computeSignatureWith(keys: HmacKeys, secret: string, timestamp: number, rawBody: RawBody): string {
  assertSigningSecret(secret);
  assertTimestamp(timestamp);
  assertRawBody(rawBody);
  return hmacDigest(keys, secret, timestamp, rawBody).toString('hex');
}

/** The full header value, `t=<timestamp>,v1=<computeSignature(...)>`. Same checks as `computeSignature`. */
export function signatureHeader(secret: string, timestamp: number, rawBody: RawBody): string {
  return signatureHeaderWith(receiverKeys, secret, timestamp, rawBody);
}

/** @internal `signatureHeader` with the key objects kept in `keys`. */
export function signatureHeaderWith(keys: HmacKeys, secret: string, timestamp: number, rawBody: RawBody): string {
  return `t=${timestamp},v1=${computeSignatureWith(keys, secret, timestamp, rawBody)}`;
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
  return standardSignatureWith(receiverKeys, secret, id, timestamp, rawBody);
}

/** @internal `standardSignature` with the key objects kept in `keys`. */
export function standardSignatureWith(keys: HmacKeys, secret: string, id: string, timestamp: number, rawBody: RawBody): string {
  assertTimestamp(timestamp);
  assertRawBody(rawBody);
  const hmac = createHmac('sha256', keys.key(secret, standardKeyBytes));
  hmac.update(`${id}.${timestamp}.`, 'utf8');
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return `v1,${hmac.digest('base64')}`;
}

/** @internal HMAC-SHA256 of `message` with `key` (raw bytes, or a kept key object; the verifiers' common step). */
export function hmacSha256(key: Uint8Array | KeyObject, message: Uint8Array): Uint8Array {
  return createHmac('sha256', key).update(message).digest();
}

/**
 * @internal The raw 32-byte digest; callers have validated their inputs. The message is fed in
 * two parts (the same bytes as `signedPayload`) so the sender's hot path never copies a body.
 */
export function hmacDigest(keys: HmacKeys, secret: string, timestamp: number, rawBody: RawBody): Buffer {
  const hmac = createHmac('sha256', keys.key(secret, secretKeyBytes));
  hmac.update(`${timestamp}.`, 'utf8');
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return hmac.digest();
}
