/**
 * Errors thrown while verifying a webhook or a payout-completed callback.
 *
 * Every refusal is a `WebhookVerificationError` with a stable `code`; a receiver answers
 * any of them with a 4xx (400 is usual) and does not process the request. Messages say
 * what went wrong in plain words and never contain a secret, an expected signature or
 * the request body.
 *
 * Programming mistakes (a parsed object passed as `rawBody`, a non-string secret, a
 * negative tolerance, a clock that does not return a number) are `TypeError` or
 * `RangeError` instead: they are bugs in the receiver, not bad requests.
 */

export const WEBHOOK_VERIFICATION_ERROR_CODES = [
  /** `secrets` is empty: nothing to verify with. */
  'no_secrets',
  /** A secret is shorter than 32 bytes (UTF-8); the message names its index. */
  'secret_too_short',
  /** No `Service-Signature` header. */
  'missing_signature',
  /** `Service-Signature` is not `t=<1..12 digits>,v1=<64 lowercase hex>` (or was sent more than once). */
  'malformed_signature',
  /** `t` is more than the tolerance (300 s by default) before or after the receiver's clock. */
  'timestamp_out_of_tolerance',
  /** No `v1` signature matches any of the secrets over `<t>.<raw body>`. */
  'signature_mismatch',
  /** The signed body is not valid UTF-8 JSON. */
  'invalid_json',
  /** No (or an empty) `Service-Event-Id` header. */
  'missing_event_id',
  /** `Service-Event-Id` differs from the body's `id`, or was sent more than once. */
  'event_id_mismatch',
] as const;

export type WebhookVerificationErrorCode = (typeof WEBHOOK_VERIFICATION_ERROR_CODES)[number];

export interface WebhookVerificationErrorOptions {
  /** For `secret_too_short`: the index of the offending secret in `secrets`. */
  secretIndex?: number;
}

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly code: WebhookVerificationErrorCode;
  /** Set for `secret_too_short`: which entry of `secrets` is too short. */
  readonly secretIndex: number | undefined;

  constructor(code: WebhookVerificationErrorCode, message: string, options: WebhookVerificationErrorOptions = {}) {
    super(message);
    this.code = code;
    this.secretIndex = options.secretIndex;
  }
}

export function isWebhookVerificationError(value: unknown): value is WebhookVerificationError {
  return value instanceof WebhookVerificationError;
}
