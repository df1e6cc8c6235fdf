/**
 * The verification rules both receiver helpers apply, whatever computes the HMAC:
 * `verifyWebhook` (node:crypto, synchronous) and `verifyWebhookAsync` (Web Crypto). Like
 * stripe-node's Webhooks, a verification is parse -> compute -> compare: `checkSignedRequest`
 * does steps 1-4 below, the caller computes one digest per secret, `matchingSecret` compares
 * them (step 5) and `readVerifiedEvent` does steps 6-8. Nothing here imports `node:`.
 *
 * Checks run in this order, and the first failure is thrown (the order is part of the
 * contract and is tested):
 *   1. `secrets` non-empty, each at least 32 UTF-8 bytes   no_secrets / secret_too_short
 *   2. `Service-Signature` present, exactly once            missing_signature / malformed_signature
 *   3. header well-formed                                   malformed_signature
 *   4. |now - t| <= tolerance, in the past or the future    timestamp_out_of_tolerance
 *   5. some v1 equals HMAC(secret, "<t>.<raw body>") for
 *      some secret, compared in constant time               signature_mismatch
 *   6. only then: the body parses as UTF-8 JSON             invalid_json
 *   7. `Service-Event-Id` present, exactly once             missing_event_id / event_id_mismatch
 *   8. when the body is an object with an `id`, that id
 *      equals `Service-Event-Id`                            event_id_mismatch
 * Order webhooks always carry `id`; the payout-completed callback body has none, so its
 * `Service-Event-Id` header alone identifies the notification.
 *
 * A request without `Service-Signature` that carries Standard Webhooks headers (an endpoint in
 * the `standard-webhooks` scheme) is checked by the standard's rules instead, with the same
 * codes (standard-rules.ts); `scheme` chooses one explicitly.
 */

import { WebhookVerificationError } from '../../signing/errors.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  EVENT_ID_HEADER,
  MIN_SECRET_BYTES,
  SIGNATURE_HEADER,
  assertRawBody,
  constantTimeEqual,
  fromHex,
  parseSignatureHeader,
  secretByteLength,
} from '../../signing/scheme.ts';
import type { RawBody } from '../../signing/scheme.ts';
import { secretKeyBytes, signedPayload } from '../../signing/scheme.ts';
import { singleHeader, type WebhookHeaders } from './headers.ts';
import { checkStandardHeaders, schemeOf, type VerifiedScheme } from './standard-rules.ts';

/** Leading or trailing HTTP optional whitespace (spaces and tabs). */
const SURROUNDING_OWS = /^[ \t]+|[ \t]+$/g;

export type { WebhookHeaders } from './headers.ts';

export interface VerifyWebhookInput {
  /** The request body exactly as received: never a parsed or re-serialized body. */
  rawBody: RawBody;
  headers: WebhookHeaders;
  /**
   * The endpoint's signing secret (or, for payout callbacks, the environment's callback
   * secret). During a rotation pass `[newSecret, previousSecret]`: a request already in
   * flight may be signed with the previous one.
   */
  secrets: string | readonly string[];
  /** Largest accepted |now - t| in seconds; default 300. */
  toleranceSeconds?: number;
  /** Clock in milliseconds since the Unix epoch; default `Date.now`. */
  now?: () => number;
  /**
   * The headers to verify: `service-signature` (`Service-Signature`, `Service-Event-Id`) or
   * `standard-webhooks` (`webhook-id`, `webhook-timestamp`, `webhook-signature`, keyed with
   * the base64-decoded secret). Default: `Service-Signature` when the request has it, else
   * Standard Webhooks when it has one of its headers (an endpoint in `both` sends the two).
   */
  scheme?: VerifiedScheme;
}

export interface VerifiedWebhook<T> {
  /** The parsed JSON body, typed as one of the documented events by default. Its shape is not validated here. */
  event: T;
  /** The `Service-Event-Id` (or `webhook-id`) header: the key for de-duplicating deliveries. */
  eventId: string;
  /** `t` of the signature: Unix seconds of this send attempt (not the event's `createdAt`). */
  timestamp: number;
  /** Index in `secrets` of the secret that matched. */
  secretIndex: number;
}

/** What steps 1-4 established: the secrets to try, `t`, the received digests and what to sign to compare. */
export interface SignedRequest {
  scheme: VerifiedScheme;
  rawBody: RawBody;
  secrets: readonly string[];
  timestamp: number;
  /** The `v1` digests of the signature header. */
  signatures: readonly Uint8Array[];
  /** The HMAC key of one secret in this scheme. */
  keyOf(secret: string): Uint8Array<ArrayBuffer>;
  /** The signed message in this scheme. */
  message: Uint8Array<ArrayBuffer>;
  /** Standard Webhooks: `webhook-id`, checked before the signature (it is signed); null otherwise. */
  eventId: string | null;
}

/** Steps 1-4: the arguments, the secrets, the `Service-Signature` header and the timestamp tolerance. */
export function checkSignedRequest(input: VerifyWebhookInput): SignedRequest {
  const { rawBody, headers } = input;
  assertRawBody(rawBody);
  const toleranceSeconds = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof toleranceSeconds !== 'number' || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new RangeError('toleranceSeconds must be a finite number of seconds, zero or more');
  }

  // 1. Secrets.
  const secrets = normalizeSecrets(input.secrets);
  const now = input.now ?? Date.now;
  if (schemeOf(input) === 'standard-webhooks') {
    const standard = checkStandardHeaders(headers, rawBody);
    checkTolerance(standard.timestamp, toleranceSeconds, now);
    return { ...standard, rawBody, secrets };
  }

  // 2-3. Signature header.
  const signatureValue = singleHeader(headers, SIGNATURE_HEADER);
  if (signatureValue.kind === 'absent') {
    throw new WebhookVerificationError('missing_signature', `the request has no ${SIGNATURE_HEADER} header`);
  }
  if (signatureValue.kind === 'several') {
    throw new WebhookVerificationError(
      'malformed_signature',
      `the request carries ${signatureValue.count} ${SIGNATURE_HEADER} headers; exactly one is required`,
    );
  }
  const { timestamp, signatures } = parseSignatureHeader(signatureValue.value);

  // 4. Timestamp tolerance, both ways, in whole Unix seconds.
  checkTolerance(timestamp, toleranceSeconds, now);
  return {
    scheme: 'service-signature',
    rawBody,
    secrets,
    timestamp,
    signatures: signatures.map(fromHex),
    keyOf: secretKeyBytes,
    message: signedPayload(timestamp, rawBody),
    eventId: null,
  };
}

export function checkTolerance(timestamp: number, toleranceSeconds: number, now: () => number): void {
  const nowMs = now();
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) {
    throw new TypeError('now() must return the current time in milliseconds since the Unix epoch');
  }
  const skew = Math.floor(nowMs / 1000) - timestamp;
  if (Math.abs(skew) > toleranceSeconds) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      skew > 0
        ? `the signature timestamp is ${skew} seconds old, more than the ${toleranceSeconds} seconds allowed`
        : `the signature timestamp is ${-skew} seconds in the future, more than the ${toleranceSeconds} seconds allowed`,
    );
  }
}

/**
 * Step 5: the index of the first secret whose digest equals some `v1`. Every digest is
 * compared with every `v1`, in constant time, whatever matched before.
 */
export function matchingSecret(request: SignedRequest, digests: readonly Uint8Array[]): number {
  const received = request.signatures;
  let secretIndex = -1;
  digests.forEach((expected, i) => {
    for (const candidate of received) {
      if (constantTimeEqual(candidate, expected) && secretIndex === -1) secretIndex = i;
    }
  });
  if (secretIndex === -1) {
    throw new WebhookVerificationError(
      'signature_mismatch',
      digests.length === 1
        ? 'no v1 signature matches the secret for this timestamp and body'
        : `no v1 signature matches any of the ${digests.length} secrets for this timestamp and body`,
    );
  }
  return secretIndex;
}

/** Steps 6-8, once the signature matched: parse the body, then check `Service-Event-Id` against it. */
export function readVerifiedEvent<T>(input: VerifyWebhookInput, request: SignedRequest, secretIndex: number): VerifiedWebhook<T> {
  // 6. Only now, parse.
  const event = parseJson(request.rawBody);
  if (request.eventId !== null) {
    // Standard Webhooks: webhook-id was checked (and signed) before; 8. it equals the body's id.
    checkBodyId(event, request.eventId, 'webhook-id');
    return { event: event as T, eventId: request.eventId, timestamp: request.timestamp, secretIndex };
  }

  // 7. Event id header.
  const eventIdValue = singleHeader(input.headers, EVENT_ID_HEADER);
  if (eventIdValue.kind === 'several') {
    throw new WebhookVerificationError(
      'event_id_mismatch',
      `the request carries ${eventIdValue.count} ${EVENT_ID_HEADER} headers; exactly one is required`,
    );
  }
  const eventId = eventIdValue.kind === 'one' ? eventIdValue.value.replace(SURROUNDING_OWS, '') : '';
  if (eventId === '') {
    throw new WebhookVerificationError('missing_event_id', `the request has no ${EVENT_ID_HEADER} header, or it is empty`);
  }
  if (eventId.includes(',')) {
    // A fetch Headers object joins repeated headers with ", ".
    throw new WebhookVerificationError(
      'event_id_mismatch',
      `the ${EVENT_ID_HEADER} header holds several values; exactly one is required`,
    );
  }

  // 8. Body id, when there is one.
  checkBodyId(event, eventId, EVENT_ID_HEADER);
  return { event: event as T, eventId, timestamp: request.timestamp, secretIndex };
}

function checkBodyId(event: unknown, eventId: string, header: string): void {
  if (typeof event !== 'object' || event === null || Array.isArray(event) || !Object.hasOwn(event, 'id')) return;
  const bodyId: unknown = (event as { id: unknown }).id;
  if (typeof bodyId !== 'string') {
    throw new WebhookVerificationError('event_id_mismatch', `the body's id is not a string, so it cannot equal ${header}`);
  }
  if (bodyId !== eventId) {
    throw new WebhookVerificationError('event_id_mismatch', `the ${header} header differs from the id in the body`);
  }
}

function normalizeSecrets(secrets: string | readonly string[] | undefined | null): readonly string[] {
  if (secrets === undefined || secrets === null) {
    throw new WebhookVerificationError('no_secrets', 'no signing secret was given to verify with');
  }
  const list: readonly unknown[] = typeof secrets === 'string' ? [secrets] : secrets;
  if (!Array.isArray(list)) {
    throw new TypeError('secrets must be a string or an array of strings');
  }
  if (list.length === 0) {
    throw new WebhookVerificationError('no_secrets', 'no signing secret was given to verify with');
  }
  list.forEach((secret, index) => {
    if (typeof secret !== 'string') {
      throw new TypeError(`secrets[${index}] is not a string`);
    }
    if (secretByteLength(secret) < MIN_SECRET_BYTES) {
      throw new WebhookVerificationError(
        'secret_too_short',
        `the secret at index ${index} is shorter than ${MIN_SECRET_BYTES} bytes; use the full secret shown by the service`,
        { secretIndex: index },
      );
    }
  });
  return list as readonly string[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function parseJson(rawBody: RawBody): unknown {
  let text: string;
  try {
    text = typeof rawBody === 'string' ? rawBody : utf8.decode(rawBody);
  } catch {
    throw new WebhookVerificationError('invalid_json', 'the body is not valid UTF-8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // The SyntaxError is not attached: its message quotes the body.
    throw new WebhookVerificationError('invalid_json', 'the body is not valid JSON');
  }
}
