/**
 * Helpers for a merchant's own receiver tests: build the headers the service would send
 * with a payload, signed with a test secret.
 *
 *   const payload = JSON.stringify(event);
 *   const headers = generateTestHeaders({ payload, secret });
 *   await fetch(receiverUrl, { method: 'POST', headers, body: payload });
 */

import { randomBytes } from 'node:crypto';
import { deliveryHeaders } from '../../signing/delivery.ts';
import type { SignatureScheme } from '../../signing/standard.ts';

export interface GenerateTestHeadersOptions {
  /** The exact body that will be sent; it is signed byte for byte. */
  payload: string;
  /** A secret of at least 32 UTF-8 bytes (see `generateSecret`). */
  secret: string;
  /** `t` of the signature in Unix seconds; default: now. Use an old value to test your tolerance check. */
  timestamp?: number;
  /**
   * `Service-Event-Id`; default: the payload's `id` when it is a JSON object with a string
   * `id` (every order webhook), otherwise a random 64-hex id (the payout-completed
   * callback body has no `id`).
   */
  eventId?: string;
  /**
   * The endpoint's signature scheme: `service-signature` (default), `standard-webhooks`
   * (`webhook-id`, `webhook-timestamp`, `webhook-signature`) or `both`.
   */
  scheme?: SignatureScheme;
}

/**
 * `Content-Type`, `Service-Event-Id` and `Service-Signature` for `payload` (or the Standard
 * Webhooks headers, or both, as `scheme` says): what the service sends, without `User-Agent`.
 *
 * @throws RangeError when the secret is shorter than 32 bytes or the timestamp is not
 *   an integer from 0 to 999999999999.
 */
export function generateTestHeaders(opts: GenerateTestHeadersOptions): Record<string, string> {
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const eventId = opts.eventId ?? payloadId(opts.payload) ?? randomBytes(32).toString('hex');
  const { 'User-Agent': userAgent, ...headers } = deliveryHeaders(opts.secret, eventId, opts.payload, timestamp, opts.scheme);
  void userAgent;
  return headers;
}

function payloadId(payload: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const id: unknown = (parsed as { id?: unknown }).id;
    if (typeof id === 'string') return id;
  }
  return undefined;
}
