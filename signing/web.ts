/**
 * The HMAC of the `Service-Signature` scheme on Web Crypto (`crypto.subtle`), for runtimes
 * without `node:crypto` (Cloudflare Workers, Deno, Bun, edge functions, browsers). The same
 * key and message as signature.ts, taken from scheme.ts; nothing here imports `node:`.
 */

import { assertRawBody, assertSigningSecret, assertTimestamp, secretKeyBytes, signedPayload, toHex } from './scheme.ts';
import type { RawBody } from './scheme.ts';

/** The part of `SubtleCrypto` the scheme needs: an HMAC key and a signature. */
export type HmacSubtle = Pick<SubtleCrypto, 'importKey' | 'sign'>;

/** `globalThis.crypto.subtle`, or a TypeError naming what is missing. */
export function defaultSubtle(): HmacSubtle {
  const subtle = (globalThis as { crypto?: { subtle?: HmacSubtle } }).crypto?.subtle;
  if (subtle === undefined) {
    throw new TypeError('this runtime has no Web Crypto (globalThis.crypto.subtle); pass `subtle` explicitly');
  }
  return subtle;
}

/** @internal The raw 32-byte digest of `<t>.<raw body>`; callers have validated their inputs. */
export async function hmacDigestAsync(subtle: HmacSubtle, secret: string, timestamp: number, rawBody: RawBody): Promise<Uint8Array> {
  return hmacSha256Async(subtle, secretKeyBytes(secret), signedPayload(timestamp, rawBody));
}

/** @internal HMAC-SHA256 of `message` with raw `key` bytes on Web Crypto (the verifiers' common step). */
export async function hmacSha256Async(subtle: HmacSubtle, key: Uint8Array<ArrayBuffer>, message: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const imported = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', imported, message));
}

/**
 * `computeSignature` on Web Crypto: the 64 lowercase hex characters of `v1`. Same checks (a
 * RangeError for a short secret or a bad timestamp, a TypeError for a body that is neither a
 * string nor bytes), as a rejected promise.
 */
export async function computeSignatureAsync(secret: string, timestamp: number, rawBody: RawBody, subtle: HmacSubtle = defaultSubtle()): Promise<string> {
  assertSigningSecret(secret);
  assertTimestamp(timestamp);
  assertRawBody(rawBody);
  return toHex(await hmacDigestAsync(subtle, secret, timestamp, rawBody));
}
