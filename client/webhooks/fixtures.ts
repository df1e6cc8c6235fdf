// What the webhook helper tests share: a secret or three, a realistic event and payout
// callback, headers signed for them, and ways to read the error a call throws.
import { createHmac } from 'node:crypto';
import { expect } from 'vitest';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, WebhookVerificationError, signatureHeader, verifyWebhook } from './index.ts';
import type { VerifyWebhookInput, WebhookVerificationErrorCode } from './index.ts';

export const SECRET = 'whsec_Zm9yLXRlc3RzLW9ubHktMzItcmFuZG9tLWJ5dGVzISE';
export const PREVIOUS_SECRET = 'whsec_cHJldmlvdXMtc2VjcmV0LWZvci1yb3RhdGlvbi10ZXN0cw';
export const OTHER_SECRET = 'whsec_b3RoZXItdGVuYW50cy1zZWNyZXQtbm90LW91cnMtLS0tLQ';
/** 2026-11-18T11:06:40Z */
export const T = 1_795_000_000;
export const EVENT_ID = '5d41402abc4b2a76b9719d911017c592a1f0e4b8c3d2e1f00112233445566778';

export const EVENT = {
  id: EVENT_ID,
  type: 'order.paid',
  apiVersion: 'v2',
  createdAt: '2026-11-18T11:06:38.412Z',
  data: {
    orderId: '3f1c9a52-7d4e-4b8a-9c61-2e5f0a7b8d90',
    merchantReference: 'INV-2026-00417',
    amountMinor: 12_500,
    currency: 'USD',
    status: 'paid',
    assetId: 'USDT',
    networkId: 'tron',
    amountBaseUnits: '125000000',
    receivedBaseUnits: '125000000',
  },
};
export const BODY = JSON.stringify(EVENT);

/** Body of the payout-completed callback: no `id`. */
export const CALLBACK_BODY = JSON.stringify({
  transactionId: 'txn_01JD8Z4S9Q6W3K2M7N5P8R1T0V',
  thirdPartyId: 'partner-payout-88213',
  amount: 150.25,
  status: 'success',
});
export const CALLBACK_EVENT_ID = 'c0ffee00aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff';

export const at = (unixSeconds: number) => () => unixSeconds * 1000;

export function headersFor(body: string | Uint8Array, opts: { secret?: string; t?: number; eventId?: string } = {}) {
  return {
    'Content-Type': 'application/json',
    [EVENT_ID_HEADER]: opts.eventId ?? EVENT_ID,
    [SIGNATURE_HEADER]: signatureHeader(opts.secret ?? SECRET, opts.t ?? T, body),
  };
}

export function verify(overrides: Partial<VerifyWebhookInput> = {}) {
  return verifyWebhook({
    rawBody: BODY,
    headers: headersFor(BODY),
    secrets: SECRET,
    now: at(T),
    ...overrides,
  });
}

/** Runs `fn` and returns the WebhookVerificationError it throws. */
export function caught(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  throw new Error('expected a WebhookVerificationError, nothing was thrown');
}

export function codeOf(fn: () => unknown): WebhookVerificationErrorCode {
  return caught(fn).code;
}

export function independentHmac(secret: string, t: number, body: Uint8Array | string): string {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${t}.`, 'ascii'), bytes]))
    .digest('hex');
}
