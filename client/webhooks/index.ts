/**
 * Webhook signatures for order webhooks and payout-completed callbacks: verification for
 * merchants' receivers, signing for the service, and test helpers. Everything of the `web`
 * entry (the Web Crypto verifier, the header parser, the errors), plus what needs node:crypto.
 */

export * from './web.ts';
export { WEBHOOK_USER_AGENT, deliveryHeaders } from '../../signing/delivery.ts';

export { computeSignature, generateSecret, signatureHeader, standardSignature } from '../../signing/signature.ts';
export { verifyWebhook } from './verify.ts';

export { generateTestHeaders } from './testing.ts';
export type { GenerateTestHeadersOptions } from './testing.ts';
