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

/** Leading or trailing HTTP optional whitespace (spaces and tabs). */
const SURROUNDING_OWS = /^[ \t]+|[ \t]+$/g;

/**
 * Request headers: a fetch `Headers` object, or a plain object such as Node's
 * `req.headers` (names are matched case-insensitively).
 */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

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
}

export interface VerifiedWebhook<T> {
  /** The parsed JSON body, typed as one of the documented events by default. Its shape is not validated here. */
  event: T;
  /** The `Service-Event-Id` header: the key for de-duplicating deliveries. */
  eventId: string;
  /** `t` of the signature: Unix seconds of this send attempt (not the event's `createdAt`). */
  timestamp: number;
  /** Index in `secrets` of the secret that matched. */
  secretIndex: number;
}

/** What steps 1-4 established: the secrets to try, `t` and the `v1` values of the header. */
export interface SignedRequest {
  rawBody: RawBody;
  secrets: readonly string[];
  timestamp: number;
  signatures: readonly string[];
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
  checkTolerance(timestamp, toleranceSeconds, input.now ?? Date.now);
  return { rawBody, secrets, timestamp, signatures };
}

function checkTolerance(timestamp: number, toleranceSeconds: number, now: () => number): void {
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
  const received = request.signatures.map(fromHex);
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
  checkBodyId(event, eventId);
  return { event: event as T, eventId, timestamp: request.timestamp, secretIndex };
}

function checkBodyId(event: unknown, eventId: string): void {
  if (typeof event !== 'object' || event === null || Array.isArray(event) || !Object.hasOwn(event, 'id')) return;
  const bodyId: unknown = (event as { id: unknown }).id;
  if (typeof bodyId !== 'string') {
    throw new WebhookVerificationError('event_id_mismatch', `the body's id is not a string, so it cannot equal ${EVENT_ID_HEADER}`);
  }
  if (bodyId !== eventId) {
    throw new WebhookVerificationError('event_id_mismatch', `the ${EVENT_ID_HEADER} header differs from the id in the body`);
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

type HeaderLookup = { kind: 'absent' } | { kind: 'one'; value: string } | { kind: 'several'; count: number };

/**
 * One header value. A `Headers` object answers case-insensitively itself (and joins
 * repeats with ", "). A plain object is searched case-insensitively; an array value
 * counts only when it holds exactly one string, and the same name under two spellings
 * counts as two values.
 */
function singleHeader(headers: WebhookHeaders, name: string): HeaderLookup {
  if (typeof headers !== 'object' || headers === null) {
    throw new TypeError('headers must be a Headers object or a plain object of header values');
  }
  if (isHeadersLike(headers)) {
    const value = headers.get(name);
    return value === null ? { kind: 'absent' } : { kind: 'one', value };
  }
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    if (typeof value === 'string') {
      values.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'string') values.push(item);
    }
  }
  if (values.length === 0) return { kind: 'absent' };
  if (values.length > 1) return { kind: 'several', count: values.length };
  return { kind: 'one', value: values[0] as string };
}

function isHeadersLike(headers: WebhookHeaders): headers is Headers {
  return typeof (headers as { get?: unknown }).get === 'function';
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
