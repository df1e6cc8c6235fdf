/**
 * `verifyWebhook` on Web Crypto (`crypto.subtle`), for receivers on runtimes without
 * `node:crypto`: Cloudflare Workers, Deno, Bun, Vercel edge functions. The same rules, in the
 * same order, with the same `WebhookVerificationError` codes (rules.ts); only the HMAC is
 * asynchronous, so every refusal is a rejected promise. Nothing here imports `node:`.
 *
 *   export default {
 *     async fetch(request, env) {
 *       const rawBody = new Uint8Array(await request.arrayBuffer());
 *       const { event, eventId } = await verifyWebhookAsync({ rawBody, headers: request.headers, secrets: env.WEBHOOK_SECRET });
 *       ...
 */

import type { WebhookEvent } from '../../generated/types/events.ts';
import { defaultSubtle, hmacSha256Async } from '../../signing/web.ts';
import type { HmacSubtle } from '../../signing/web.ts';
import { checkSignedRequest, matchingSecret, readVerifiedEvent } from './rules.ts';
import type { VerifiedWebhook, VerifyWebhookInput } from './rules.ts';

export interface VerifyWebhookAsyncInput extends VerifyWebhookInput {
  /** The Web Crypto implementation; default `globalThis.crypto.subtle`. */
  subtle?: HmacSubtle;
}

export async function verifyWebhookAsync<T = WebhookEvent>(input: VerifyWebhookAsyncInput): Promise<VerifiedWebhook<T>> {
  const request = checkSignedRequest(input);
  const subtle = input.subtle ?? defaultSubtle();
  const digests = await Promise.all(request.secrets.map((secret) => hmacSha256Async(subtle, request.keyOf(secret), request.message)));
  return readVerifiedEvent<T>(input, request, matchingSecret(request, digests));
}
