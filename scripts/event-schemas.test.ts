// The event schemas: narrowed per event type, UTC timestamps, positive overpayments; the
// published (spec/) schemas accept tomorrow's added field or review reason, while the strict
// variant in generated/ (the server's validation, the conformance suite) refuses them, and the
// requests the server accepts stay closed.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { strictVariant } from './generate.ts';
import { loadAsyncApi } from './lib/asyncapi.ts';
import { ASYNCAPI_DOC, GENERATED_DIR } from './lib/specs.ts';

const formatsModule = addFormatsModule as unknown as FormatsPlugin | { default: FormatsPlugin };
const addFormats: FormatsPlugin = typeof formatsModule === 'function' ? formatsModule : formatsModule.default;

type Json = Record<string, unknown>;
type Validate = (value: unknown) => boolean;

function compiler(): (schema: unknown) => Validate {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addKeyword('x-decimal');
  ajv.addKeyword('x-extensible');
  return (schema) => {
    const validate = ajv.compile(schema as Json);
    return (value) => validate(value) === true;
  };
}

const MESSAGES = ['orderCreated', 'orderPaid', 'orderPaymentReviewRequired', 'webhookTest', 'payoutCompleted'] as const;
type Message = (typeof MESSAGES)[number];

/** The first example payload of each message, as written in the spec. */
function examplePayload(message: Message): Json {
  const raw = parseYaml(readFileSync(ASYNCAPI_DOC, 'utf8')) as { components: { messages: Record<string, { examples: Array<{ payload: Json }> }> } };
  const payload = raw.components.messages[message]?.examples[0]?.payload;
  if (payload === undefined) throw new Error(`no example for ${message}`);
  return structuredClone(payload);
}

const payloadSchema = (doc: Json, message: Message): unknown => ((doc.components as Json).messages as Record<string, Json>)[message]?.payload;

let published: Record<Message, Validate>;
let strict: Record<Message, Validate>;

beforeAll(async () => {
  const spec = (await loadAsyncApi(ASYNCAPI_DOC)) as Json;
  const generated = JSON.parse(readFileSync(path.join(GENERATED_DIR, 'asyncapi', 'webhooks.json'), 'utf8')) as Json;
  const compile = compiler();
  published = Object.fromEntries(MESSAGES.map((m) => [m, compile(payloadSchema(spec, m))])) as Record<Message, Validate>;
  strict = Object.fromEntries(MESSAGES.map((m) => [m, compile(payloadSchema(generated, m))])) as Record<Message, Validate>;
});

describe('event data narrowed per type', () => {
  it.each(MESSAGES.map((m) => [m]))('the %s example is valid in the published and the strict schema', (m) => {
    expect(published[m](examplePayload(m))).toBe(true);
    expect(strict[m](examplePayload(m))).toBe(true);
  });

  const cases: Array<[string, Message, (p: Json) => void]> = [
    ['order.created with status paid', 'orderCreated', (p) => ((p.data as Json).status = 'paid')],
    ['order.paid with status open', 'orderPaid', (p) => ((p.data as Json).status = 'open')],
    ['order.paid with status review_required', 'orderPaid', (p) => ((p.data as Json).status = 'review_required')],
    ['order.payment_review_required with status paid', 'orderPaymentReviewRequired', (p) => ((p.data as Json).status = 'paid')],
    ['order.payment_review_required without reviewReason', 'orderPaymentReviewRequired', (p) => delete (p.data as Json).reviewReason],
    ['an overpaymentBaseUnits of "0"', 'orderPaid', (p) => ((p.data as Json).overpaymentBaseUnits = '0')],
    ['a createdAt with a numeric offset', 'orderPaid', (p) => (p.createdAt = '2026-11-22T09:15:30.123+01:00')],
    ['a createdAt without a zone', 'webhookTest', (p) => (p.createdAt = '2026-11-22T09:15:30.123')],
  ];
  it.each(cases)('refuses %s, published and strict', (_label, m, mutate) => {
    const payload = examplePayload(m);
    mutate(payload);
    expect(published[m](payload)).toBe(false);
    expect(strict[m](payload)).toBe(false);
  });
});

describe('forward compatibility', () => {
  const additions: Array<[string, Message, (p: Json) => void]> = [
    ['a new envelope field', 'orderPaid', (p) => (p.livemode = true)],
    ['a new data field', 'orderCreated', (p) => ((p.data as Json).customerCountry = 'DE')],
    ['a new review reason', 'orderPaymentReviewRequired', (p) => ((p.data as Json).reviewReason = 'chargeback_opened')],
    ['a new webhook.test data field', 'webhookTest', (p) => ((p.data as Json).endpointId = 'whe_1')],
    ['a new payout-completed field', 'payoutCompleted', (p) => (p.settledAt = '2026-11-22T09:15:30.123Z')],
  ];
  it.each(additions)('the published schema accepts %s; the strict variant refuses it', (_label, m, mutate) => {
    const payload = examplePayload(m);
    mutate(payload);
    expect(published[m](payload)).toBe(true);
    expect(strict[m](payload)).toBe(false);
  });

  it('requests stay closed: the sandbox review reason is the closed list, published and strict', () => {
    const compile = compiler();
    for (const file of ['sandbox.json', 'sandbox.bundled.json']) {
      const doc = JSON.parse(readFileSync(path.join(GENERATED_DIR, 'openapi', file), 'utf8')) as Json;
      const schemas = (doc.components as Json).schemas as Json;
      const validate = compile({ ...(schemas.SandboxReviewRequest as Json), components: { schemas } });
      expect(validate({ reason: 'deposit_revoked' }), file).toBe(true);
      expect(validate({ reason: 'chargeback_opened' }), file).toBe(false);
      expect(validate({ reason: 'deposit_revoked', extra: 1 }), file).toBe(false);
    }
  });
});

describe('strictVariant', () => {
  it('closes x-extensible objects, keeps the known branch of an x-extensible anyOf, and drops the marker', () => {
    const open = {
      type: 'object',
      'x-extensible': true,
      properties: { reason: { description: 'why', 'x-extensible': true, anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'string' }] } },
    };
    expect(strictVariant(open)).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: { reason: { description: 'why', type: 'string', enum: ['a', 'b'] } },
    });
    expect(strictVariant({ type: 'object', properties: { a: {} } })).toEqual({ type: 'object', properties: { a: {} } });
  });

  it('refuses the marker where it means nothing', () => {
    expect(() => strictVariant({ type: 'string', 'x-extensible': true })).toThrow(/x-extensible/);
  });
});
