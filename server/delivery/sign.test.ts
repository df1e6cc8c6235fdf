// The sender signs with key objects of its own (SENDER_KEYS_KEPT of them), not the merchant
// kit's, which holds a receiver's one or two secrets (signing/signature.ts, receiverKeys).
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSecret, receiverKeys, secretKeyBytes } from '../../signing/signature.ts';
import { standardKeyBytes } from '../../signing/standard.ts';
import { newEventId } from '../domain/ids.ts';
import type { EventRecord } from '../domain/model.ts';
import { SENDER_KEYS_KEPT, buildDeliveryRequest, senderKeys } from './sign.ts';

const T = 1_795_000_000_000;

function event(): EventRecord {
  const id = newEventId();
  return { id, environmentId: 'env_01KAMV0TEST', type: 'order.paid', payload: JSON.stringify({ id, note: 'Zürich – 50 €' }), orderId: null, merchantReference: null, transactionId: null, createdAt: T };
}

describe('buildDeliveryRequest', () => {
  it('signs both schemes as the raw key bytes do, with the sender’s own key objects: the kit’s are untouched', () => {
    const held = [receiverKeys.held(secretKeyBytes), receiverKeys.held(standardKeyBytes)];
    const sender = [senderKeys.held(secretKeyBytes), senderKeys.held(standardKeyBytes)];
    for (let i = 0; i < 5; i++) {
      const secret = generateSecret();
      const e = event();
      const { headers, timestamp } = buildDeliveryRequest(e, secret, T, 'both');
      expect(headers['Service-Signature']).toBe(`t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${e.payload}`).digest('hex')}`);
      expect(headers['webhook-signature']).toBe(`v1,${createHmac('sha256', standardKeyBytes(secret)).update(`${e.id}.${timestamp}.${e.payload}`).digest('base64')}`);
    }
    expect([receiverKeys.held(secretKeyBytes), receiverKeys.held(standardKeyBytes)]).toEqual(held);
    expect([senderKeys.held(secretKeyBytes), senderKeys.held(standardKeyBytes)]).toEqual(sender.map((n) => Math.min(n + 5, SENDER_KEYS_KEPT)));
    expect(SENDER_KEYS_KEPT).toBe(1024);
  });
});
