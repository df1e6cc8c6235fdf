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

import { createHmac, randomBytes } from 'node:crypto';
import { SECRET_PREFIX, assertRawBody, assertSigningSecret, assertTimestamp, secretKeyBytes } from './scheme.ts';
import type { RawBody } from './scheme.ts';

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

/** A new signing secret: `whsec_` followed by the base64url (no padding) of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * @internal The raw 32-byte digest; callers have validated their inputs. The message is fed in
 * two parts (the same bytes as `signedPayload`) so the sender's hot path never copies a body.
 */
export function hmacDigest(secret: string, timestamp: number, rawBody: RawBody): Buffer {
  const hmac = createHmac('sha256', secretKeyBytes(secret));
  hmac.update(`${timestamp}.`, 'utf8');
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return hmac.digest();
}
