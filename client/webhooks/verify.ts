/**
 * Receiver-side verification of order webhooks and payout-completed callbacks on
 * `node:crypto`, synchronous, in either signature scheme (Service-Signature or Standard Webhooks). The rules, their order and the errors are in rules.ts, shared
 * with `verifyWebhookAsync` (Web Crypto); this module computes the HMAC per secret.
 *
 * After a successful verification, store `eventId` together with the business update so a
 * repeated delivery cannot be applied twice.
 */

import type { WebhookEvent } from '../../generated/types/events.ts';
import { hmacSha256, receiverKeys } from '../../signing/signature.ts';
import { checkSignedRequest, matchingSecret, readVerifiedEvent } from './rules.ts';
import type { VerifiedWebhook, VerifyWebhookInput } from './rules.ts';

export type { VerifiedWebhook, VerifyWebhookInput, WebhookHeaders } from './rules.ts';

export function verifyWebhook<T = WebhookEvent>(input: VerifyWebhookInput): VerifiedWebhook<T> {
  const request = checkSignedRequest(input);
  const digests = request.secrets.map((secret) => hmacSha256(receiverKeys.key(secret, request.keyOf), request.message));
  return readVerifiedEvent<T>(input, request, matchingSecret(request, digests));
}
