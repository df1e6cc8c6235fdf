import { describe, expect, it } from 'vitest';
import { webhookChannels } from '../core/asyncapi.ts';
import { hmacHex } from '../core/signature.ts';
import { Variator } from '../core/vary.ts';
import { EventFactory, tamper } from './events.ts';

const channels = webhookChannels();
const messages = channels.flatMap((c) => c.messages);
/** The documentation-only secret the spec's examples are signed with. */
const DOC_SECRET = 'whsec_RG9jc09ubHlfRXhhbXBsZV9TZWNyZXRfMzJfYnl0ZXM';

describe('the walk of the AsyncAPI document', () => {
  it('finds every message of every channel, with its pointer, schemas and examples', () => {
    expect(channels.map((c) => [c.id, c.serverNames, c.operationId])).toEqual([
      ['orderWebhooks', ['merchant'], 'sendOrderWebhook'],
      ['payoutCompleted', ['notifyUrl'], 'sendPayoutCompletedCallback'],
    ]);
    expect(messages.map((m) => m.name)).toEqual(['order.created', 'order.paid', 'order.payment_review_required', 'webhook.test', 'webhook_endpoint.failing', 'webhook_endpoint.disabled', 'webhook_endpoint.recovered', 'payout.completed']);
    expect(messages.find((m) => m.name === 'order.paid')?.pointer).toBe('webhooks.asyncapi.yaml#/components/messages/orderPaid');
    expect(messages.filter((m) => m.bodyCarriesEventId).map((m) => m.name)).not.toContain('payout.completed');
    for (const m of messages) expect(m.examples.length).toBeGreaterThan(0);
  });

  it('serialises the examples exactly as the service signs them', () => {
    // Recomputing the HMAC over our bytes (the suite's own HMAC) reproduces each documented v1:
    // the bodies we send are the service's bodies, byte for byte.
    const factory = new EventFactory(1);
    for (const m of messages) {
      factory.examples(m).forEach((sample, i) => {
        const header = m.examples[i]!.headers['Service-Signature']!;
        const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)!;
        expect(hmacHex(DOC_SECRET, t!, sample.body), `${m.name} ${m.examples[i]!.name}`).toBe(v1);
        expect(sample.valid).toBe(true);
        expect(sample.eventId).toBe(m.examples[i]!.headers['Service-Event-Id']);
      });
    }
  });
});

describe('generated variations', () => {
  it('are valid under the message schema, for many seeds', () => {
    const variator = new Variator();
    for (let seed = 0; seed < 400; seed++) {
      const factory = new EventFactory(seed, variator);
      for (const m of messages) {
        const sample = factory.variation(m, 'property');
        expect(variator.errors(m.payloadSchema, sample.payload), `${m.name} seed ${seed}: ${sample.body.toString()}`).toEqual([]);
        expect(sample.origin).not.toMatch(/did not fit/);
        expect(sample.eventId).toMatch(/^[0-9a-f]{64}$/);
        if (m.bodyCarriesEventId) expect(sample.eventId).toBe((sample.payload as { id: string }).id);
      }
    }
  });

  it('are reproducible from the seed, and differ between seeds', () => {
    const paid = messages.find((m) => m.name === 'order.paid')!;
    const a = new EventFactory(99).variation(paid, 'x').body.toString();
    const b = new EventFactory(99).variation(paid, 'x').body.toString();
    const c = new EventFactory(100).variation(paid, 'x').body.toString();
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it('vary ids, amounts and references, and keep the event type and status', () => {
    const shared = new Variator();
    const paid = messages.find((m) => m.name === 'order.paid')!;
    const bodies = Array.from({ length: 20 }, (_, i) => new EventFactory(i, shared).variation(paid, 'v').payload as {
      id: string;
      type: string;
      data: { orderId: string; amountMinor: number; merchantReference: string; status: string };
    });
    expect(new Set(bodies.map((b) => b.id)).size).toBe(20);
    expect(new Set(bodies.map((b) => b.data.orderId)).size).toBeGreaterThan(15);
    expect(new Set(bodies.map((b) => b.data.amountMinor)).size).toBeGreaterThan(10);
    expect(new Set(bodies.map((b) => b.data.merchantReference)).size).toBeGreaterThan(10);
    expect(new Set(bodies.map((b) => b.type))).toEqual(new Set(['order.paid']));
    expect(new Set(bodies.map((b) => b.data.status))).toEqual(new Set(['paid']));
  });
});

describe('tamper', () => {
  it('changes exactly one byte and keeps the body valid with the same id', () => {
    const variator = new Variator();
    for (let seed = 0; seed < 30; seed++) {
      const factory = new EventFactory(seed, variator);
      for (const m of messages) {
        const sample = factory.variation(m, 'tamper');
        const changed = tamper(sample, variator, seed);
        expect(changed.body.length).toBe(sample.body.length);
        const diff = [...changed.body].filter((byte, i) => byte !== sample.body[i]).length;
        expect(diff).toBe(1);
        const parsed = JSON.parse(changed.body.toString('utf8')) as { id?: string };
        expect(variator.valid(m.payloadSchema, parsed)).toBe(true);
        if (m.bodyCarriesEventId) expect(parsed.id).toBe(sample.eventId);
      }
    }
  });
});
