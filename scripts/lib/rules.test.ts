import { describe, expect, it } from 'vitest';
import { contractRules } from './rules.ts';

const problemAnswer = (slug: string, status: number) => ({
  description: 'Refused. More text.',
  content: { 'application/problem+json': { examples: { a: { value: { type: `https://errors.payments.example/${slug}`, status } } } } },
});

const doc = (op: Record<string, unknown>, info: Record<string, unknown> = {}) =>
  new Map([['orders', { info, paths: { '/v2/orders': { post: { operationId: 'createOrder', ...op } } } }]]);

describe('contractRules', () => {
  it('derives a rule per documented status and per problem type given by example, beside the written ones', () => {
    const { rules, problems } = contractRules(
      doc(
        { 'x-rules': [{ id: 'createOrder#no-key-creates', rule: 'Without a key  every request creates an order.' }], responses: { '201': { description: 'Created: the order.' }, '409': problemAnswer('order-not-open', 409), '422': problemAnswer('order-not-open', 422) } },
        { 'x-rules': [{ id: 'orders#newest-first', rule: 'Newest first.' }] },
      ),
      { info: { 'x-rules': [{ id: 'webhooks#forward-compatible', rule: 'Ignore unknown fields.' }] } },
      { 'order-not-open': 'Order not open' },
    );
    expect(problems).toEqual([]);
    expect(rules).toEqual([
      { id: 'orders#newest-first', document: 'orders', kind: 'written', rule: 'Newest first.' },
      { id: 'createOrder#no-key-creates', document: 'orders', operation: 'createOrder', kind: 'written', rule: 'Without a key every request creates an order.' },
      { id: 'createOrder#status-201', document: 'orders', operation: 'createOrder', kind: 'status', rule: 'POST /v2/orders answers 201: Created: the order.' },
      { id: 'createOrder#status-409', document: 'orders', operation: 'createOrder', kind: 'status', rule: 'POST /v2/orders answers 409: Refused.' },
      { id: 'createOrder#status-422', document: 'orders', operation: 'createOrder', kind: 'status', rule: 'POST /v2/orders answers 422: Refused.' },
      { id: 'createOrder#problem-order-not-open', document: 'orders', operation: 'createOrder', kind: 'problem', rule: 'POST /v2/orders answers 409 or 422 order-not-open (Order not open) as application/problem+json whose status is the HTTP status' },
      { id: 'webhooks#forward-compatible', document: 'webhooks', kind: 'written', rule: 'Ignore unknown fields.' },
    ]);
  });

  it('refuses malformed entries, ids of another prefix, reserved slugs and repeated ids', () => {
    const { problems } = contractRules(
      doc({
        'x-rules': [
          { id: 'createOrder#Upper', rule: 'x' },
          { id: 'getOrder#elsewhere', rule: 'x' },
          { id: 'createOrder#status-201', rule: 'x' },
          { id: 'createOrder#twice', rule: 'x' },
          { id: 'createOrder#twice', rule: 'y' },
          { id: 'createOrder#no-text', rule: ' ' },
          { id: 'createOrder#extra', rule: 'x', note: 'n' },
        ],
        responses: {},
      }),
      undefined,
      {},
    );
    expect(problems).toEqual([
      'orders: POST /v2/orders: x-rules id "createOrder#Upper" must be createOrder#<slug> (lowercase words joined by -)',
      'orders: POST /v2/orders: x-rules id "getOrder#elsewhere" must be createOrder#<slug> (lowercase words joined by -)',
      'orders: POST /v2/orders: x-rules id "createOrder#status-201" takes a slug reserved for the derived rules',
      'orders: POST /v2/orders: x-rules[5] must be {id, rule} with two non-empty strings',
      'orders: POST /v2/orders: x-rules[6] must be {id, rule} with two non-empty strings (unknown: note)',
      'rule id createOrder#twice is used twice',
    ]);
  });
});
