/**
 * `payments-webhooks/web`: webhook verification for runtimes that offer only Web Crypto
 * (Cloudflare Workers, Deno, Bun, Vercel edge functions, browsers). This entry never imports
 * `node:crypto` or any other `node:` module; `check:packages` and web.test.ts prove it on the
 * built bundle.
 */

export {
  DEFAULT_TOLERANCE_SECONDS,
  EVENT_ID_HEADER,
  MIN_SECRET_BYTES,
  SECRET_PREFIX,
  SIGNATURE_HEADER,
  parseSignatureHeader,
  secretByteLength,
} from '../../signing/scheme.ts';
export type { ParsedSignatureHeader, RawBody } from '../../signing/scheme.ts';
export { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '../../signing/standard.ts';
export type { SignatureScheme } from '../../signing/standard.ts';
export type { VerifiedScheme } from './standard-rules.ts';
export { computeSignatureAsync } from '../../signing/web.ts';
export type { HmacSubtle } from '../../signing/web.ts';

export { verifyWebhookAsync } from './verify-async.ts';
export type { VerifyWebhookAsyncInput } from './verify-async.ts';
export type { VerifiedWebhook, VerifyWebhookInput, WebhookHeaders } from './rules.ts';
export type { WebhookEvent } from '../../generated/types/events.ts';

export {
  WEBHOOK_VERIFICATION_ERROR_CODES,
  WebhookVerificationError,
  isWebhookVerificationError,
} from '../../signing/errors.ts';
export type { WebhookVerificationErrorCode } from '../../signing/errors.ts';
