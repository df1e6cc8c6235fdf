// The webhooks AsyncAPI document: it validates clean with @asyncapi/parser, broken copies are
// reported, and every example is a real, verifiable delivery (signature and payload schema).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { loadAsyncApi, validateAsyncApi, type JsonObject, type JsonValue } from './asyncapi.ts';
import { ASYNCAPI_DOC, SPEC_DIR } from './specs.ts';

// ajv-formats is CommonJS: under ESM its plugin may arrive as the module itself or wrapped in `default`.
const formatsModule = addFormatsModule as unknown as FormatsPlugin | { default: FormatsPlugin };
const addFormats: FormatsPlugin = typeof formatsModule === 'function' ? formatsModule : formatsModule.default;

/** The documentation-only secret the document's examples are signed with. */
const EXAMPLE_SECRET = 'whsec_RG9jc09ubHlfRXhhbXBsZV9TZWNyZXRfMzJfYnl0ZXM';
const SIGNATURE = /^t=([0-9]{1,12}),v1=([0-9a-f]{64})$/;

const MESSAGES = ['orderCreated', 'orderPaid', 'orderPaymentReviewRequired', 'webhookTest', 'payoutCompleted', 'webhookEndpointFailing', 'webhookEndpointDisabled', 'webhookEndpointRecovered'] as const;

interface MessageExample {
  name: string;
  summary?: string;
  headers: Record<string, string>;
  payload: JsonObject;
}

function obj(value: JsonValue | undefined, what: string): JsonObject {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not an object`);
  return value;
}

/** The examples as written in the YAML (key order preserved: it is the signed byte order). */
function rawExamples(): Array<{ message: string; example: MessageExample }> {
  const raw = parseYaml(readFileSync(ASYNCAPI_DOC, 'utf8')) as { components: { messages: Record<string, { examples?: MessageExample[] }> } };
  return Object.entries(raw.components.messages).flatMap(([message, m]) => (m.examples ?? []).map((example) => ({ message, example })));
}

function sign(secret: string, t: string, body: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${body}`, 'utf8').digest('hex');
}

describe('webhooks.asyncapi.yaml', () => {
  let resolved: JsonObject;

  beforeAll(async () => {
    resolved = await loadAsyncApi(ASYNCAPI_DOC);
  });

  it('validates with zero errors and zero warnings', async () => {
    const result = await validateAsyncApi(ASYNCAPI_DOC);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('resolves every $ref, including ./common/schemas.yaml, and strips parser extensions', () => {
    const text = JSON.stringify(resolved);
    expect(text).not.toContain('"$ref"');
    expect(text).not.toContain('x-parser-');
    const payload = obj(obj(obj(obj(resolved.components, 'components').messages, 'messages').orderPaid, 'orderPaid').payload, 'payload');
    expect(obj(obj(payload.properties, 'properties').type, 'type').const).toBe('order.paid');
  });

  it('declares the channels, operations and messages of the contract', () => {
    const raw = parseYaml(readFileSync(ASYNCAPI_DOC, 'utf8')) as {
      asyncapi: string;
      operations: Record<string, { action: string; channel: { $ref: string }; bindings: { http: { method: string } } }>;
      channels: Record<string, { messages: Record<string, unknown> }>;
      components: { messages: Record<string, { payload?: { $ref: string }; headers?: { $ref: string }; examples?: unknown[] }> };
    };
    expect(raw.asyncapi).toBe('3.0.0');
    expect(Object.keys(raw.channels.orderWebhooks?.messages ?? {})).toEqual(['orderCreated', 'orderPaid', 'orderPaymentReviewRequired', 'webhookTest', 'webhookEndpointFailing', 'webhookEndpointDisabled', 'webhookEndpointRecovered']);
    expect(Object.keys(raw.channels.payoutCompleted?.messages ?? {})).toEqual(['payoutCompleted']);
    expect(raw.operations.sendOrderWebhook).toMatchObject({ action: 'send', channel: { $ref: '#/channels/orderWebhooks' }, bindings: { http: { method: 'POST' } } });
    expect(raw.operations.sendPayoutCompletedCallback).toMatchObject({ action: 'send', channel: { $ref: '#/channels/payoutCompleted' }, bindings: { http: { method: 'POST' } } });
    expect(Object.keys(raw.components.messages).sort()).toEqual([...MESSAGES].sort());
    for (const name of MESSAGES) {
      const m = raw.components.messages[name];
      // AsyncAPI 3 allows a message without payload; this contract does not.
      expect(m?.payload?.$ref, `${name}.payload`).toMatch(/^#\/components\/schemas\/[A-Za-z]+$/);
      expect(m?.headers?.$ref, `${name}.headers`).toBe('#/components/schemas/WebhookHeaders');
      expect(m?.examples?.length, `${name}.examples`).toBeGreaterThan(0);
    }
  });

  describe('broken copies are reported', () => {
    let dir: string;
    const source = readFileSync(ASYNCAPI_DOC, 'utf8');

    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'asyncapi-broken-'));
      // The copies resolve ./common/schemas.yaml beside them, as the real document does.
      cpSync(path.join(SPEC_DIR, 'common'), path.join(dir, 'common'), { recursive: true });
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const cases: Array<[string, string, string, RegExp]> = [
      ['an unsupported asyncapi version', 'asyncapi: 3.0.0\n', 'asyncapi: 3.0.7\n', /Version "3\.0\.7" is not supported/],
      ['a payload reference to a missing schema', "$ref: '#/components/schemas/OrderPaidEvent'", "$ref: '#/components/schemas/OrderPaidEvnt'", /OrderPaidEvnt.*does not exist/],
      ['a reference to a missing common schema', './common/schemas.yaml#/OrderPaidEvent', './common/schemas.yaml#/OrderPaidEvnt', /OrderPaidEvnt.*does not exist/],
      [
        'an operation sending a message of another channel',
        "      - $ref: '#/channels/payoutCompleted/messages/payoutCompleted'",
        "      - $ref: '#/channels/orderWebhooks/messages/orderPaid'",
        /does not belong to the specified channel/,
      ],
      ['an HTTP binding with an unknown method', 'method: POST', 'method: SEND', /method/],
    ];

    it.each(cases)('%s', async (label, search, replacement, expected) => {
      const broken = source.replace(search, replacement);
      expect(broken, 'the mutation applies').not.toBe(source);
      const file = path.join(dir, `${label.replace(/[^a-z]+/gi, '-')}.asyncapi.yaml`);
      writeFileSync(file, broken);
      const result = await validateAsyncApi(file);
      expect(result.errors.length).toBeGreaterThan(0);
      expect(result.errors.join('\n')).toMatch(expected);
      await expect(loadAsyncApi(file)).rejects.toThrow(/invalid AsyncAPI document/);
    });
  });

  it('declares the signature as a security scheme of each operation: Service-Signature, and Standard Webhooks for order webhooks', () => {
    const raw = parseYaml(readFileSync(ASYNCAPI_DOC, 'utf8')) as {
      operations: Record<string, { security?: Array<{ $ref: string }> }>;
      components: { securitySchemes: Record<string, { type: string; name: string; in: string }> };
    };
    const { standardWebhooksSignature, ...serviceSignature } = raw.components.securitySchemes;
    for (const scheme of Object.values(serviceSignature)) expect(scheme).toMatchObject({ type: 'httpApiKey', name: 'Service-Signature', in: 'header' });
    expect(standardWebhooksSignature).toMatchObject({ type: 'httpApiKey', name: 'webhook-signature', in: 'header' });
    expect(raw.operations.sendOrderWebhook?.security).toEqual([
      { $ref: '#/components/securitySchemes/endpointSignature' },
      { $ref: '#/components/securitySchemes/standardWebhooksSignature' },
    ]);
    expect(raw.operations.sendPayoutCompletedCallback?.security).toEqual([{ $ref: '#/components/securitySchemes/callbackSignature' }]);
  });

  it('requires the three headers the interface names, or the Standard Webhooks three in their place (the endpoint\'s scheme)', () => {
    const headers = obj(obj(obj(resolved.components, 'components').schemas, 'schemas').WebhookHeaders, 'WebhookHeaders');
    expect(headers.required).toEqual(['Content-Type']);
    expect(headers.anyOf).toEqual([{ required: ['Service-Event-Id', 'Service-Signature'] }, { required: ['webhook-id', 'webhook-timestamp', 'webhook-signature'] }]);
  });

  it('signs with a documentation-only secret that the spec itself accepts as a WebhookSecret', () => {
    const management = parseYaml(readFileSync(path.join(SPEC_DIR, 'management.openapi.yaml'), 'utf8')) as { components: { schemas: { WebhookSecret: { pattern: string } } } };
    expect(EXAMPLE_SECRET).toMatch(new RegExp(management.components.schemas.WebhookSecret.pattern));
    expect(Buffer.byteLength(EXAMPLE_SECRET, 'utf8')).toBeGreaterThanOrEqual(32);
    expect(readFileSync(ASYNCAPI_DOC, 'utf8')).toContain(EXAMPLE_SECRET);
  });

  it('gives an example event one body in every document that shows it', () => {
    const bodies = new Map<string, Set<string>>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node !== null && typeof node === 'object') {
        const o = node as Record<string, unknown>;
        if (typeof o.id === 'string' && /^[0-9a-f]{64}$/.test(o.id) && typeof o.type === 'string' && 'data' in o) {
          bodies.set(o.id, (bodies.get(o.id) ?? new Set()).add(JSON.stringify(o)));
        }
        Object.values(o).forEach(walk);
      }
    };
    for (const file of readdirSync(SPEC_DIR).filter((f) => f.endsWith('.yaml'))) walk(parseYaml(readFileSync(path.join(SPEC_DIR, file), 'utf8')));
    expect(bodies.size).toBeGreaterThan(5);
    for (const [id, set] of bodies) expect([...set], id).toHaveLength(1);
  });

  describe('examples', () => {
    const examples = rawExamples();

    it('exist for every message', () => {
      const covered = new Set(examples.map((e) => e.message));
      for (const name of MESSAGES) expect(covered.has(name), name).toBe(true);
    });

    it.each(examples.map((e) => [`${e.message}/${e.example.name}`, e] as const))('%s carries a real signature over the compact JSON body', (_label, { example }) => {
      const header = example.headers['Service-Signature'] ?? '';
      const match = SIGNATURE.exec(header);
      expect(match, header).not.toBeNull();
      const [, t = '', v1 = ''] = match ?? [];
      const expected = sign(EXAMPLE_SECRET, t, JSON.stringify(example.payload));
      expect(timingSafeEqual(Buffer.from(v1, 'hex'), Buffer.from(expected, 'hex'))).toBe(true);
      // Any other byte sequence (for example pretty-printed JSON) does not verify.
      expect(sign(EXAMPLE_SECRET, t, JSON.stringify(example.payload, null, 2))).not.toBe(v1);
    });

    it.each(examples.map((e) => [`${e.message}/${e.example.name}`, e] as const))('%s has consistent headers and timestamps', (_label, { example }) => {
      expect(example.headers['Content-Type']).toBe('application/json');
      expect(example.headers['Service-Event-Id']).toMatch(/^[0-9a-f]{64}$/);
      if ('id' in example.payload) expect(example.headers['Service-Event-Id']).toBe(example.payload.id);
      const t = Number(SIGNATURE.exec(example.headers['Service-Signature'] ?? '')?.[1]);
      const year2026 = [Date.UTC(2026, 0, 1) / 1000, Date.UTC(2027, 0, 1) / 1000];
      expect(t).toBeGreaterThanOrEqual(year2026[0] ?? 0);
      expect(t).toBeLessThan(year2026[1] ?? 0);
      const createdAt = example.payload.createdAt;
      if (typeof createdAt === 'string') {
        // t is the send attempt: at or after the event, within one retry cycle (about 16 h).
        const created = Date.parse(createdAt) / 1000;
        expect(t).toBeGreaterThanOrEqual(Math.floor(created));
        expect(t - created).toBeLessThan(20 * 3600);
      }
    });

    it('retries of one event share id and body, with a fresh t and signature', () => {
      const byId = new Map<string, MessageExample[]>();
      for (const { example } of examples) {
        const id = example.headers['Service-Event-Id'] ?? '';
        byId.set(id, [...(byId.get(id) ?? []), example]);
      }
      for (const group of byId.values()) {
        const bodies = new Set(group.map((e) => JSON.stringify(e.payload)));
        expect(bodies.size).toBe(1);
        const signatures = new Set(group.map((e) => e.headers['Service-Signature']));
        expect(signatures.size).toBe(group.length);
      }
    });

    it.each(examples.map((e) => [`${e.message}/${e.example.name}`, e] as const))('%s is valid against its payload and header schemas', (_label, { message, example }) => {
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats(ajv);
      ajv.addKeyword('x-decimal');
      const m = obj(obj(obj(resolved.components, 'components').messages, 'messages')[message], message);
      const validatePayload = ajv.compile(obj(m.payload, `${message}.payload`));
      expect(validatePayload(example.payload), ajv.errorsText(validatePayload.errors)).toBe(true);
      const validateHeaders = ajv.compile(obj(m.headers, `${message}.headers`));
      expect(validateHeaders(example.headers), ajv.errorsText(validateHeaders.errors)).toBe(true);
    });
  });
});
