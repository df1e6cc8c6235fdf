/**
 * Webhook signatures for order webhooks and payout-completed callbacks: verification for
 * merchants' receivers, signing for the service, and test helpers.
 */

export {
  DEFAULT_TOLERANCE_SECONDS,
  EVENT_ID_HEADER,
  MIN_SECRET_BYTES,
  SECRET_PREFIX,
  SIGNATURE_HEADER,
  computeSignature,
  generateSecret,
  parseSignatureHeader,
  secretByteLength,
  signatureHeader,
} from '../../signing/signature.ts';
export type { ParsedSignatureHeader, RawBody } from '../../signing/signature.ts';
export { WEBHOOK_USER_AGENT, deliveryHeaders } from '../../signing/delivery.ts';

export { verifyWebhook } from './verify.ts';
export type { VerifiedWebhook, VerifyWebhookInput, WebhookHeaders } from './verify.ts';
export type { WebhookEvent } from '../../generated/types/events.ts';

export {
  WEBHOOK_VERIFICATION_ERROR_CODES,
  WebhookVerificationError,
  isWebhookVerificationError,
} from '../../signing/errors.ts';
export type { WebhookVerificationErrorCode } from '../../signing/errors.ts';

export { generateTestHeaders } from './testing.ts';
export type { GenerateTestHeadersOptions } from './testing.ts';
