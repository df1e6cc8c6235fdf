// The reference-preserving bundles in generated/ pass each format's own parser and lint, and
// keep named components and the references AsyncAPI 3 requires.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Parser, fromFile } from '@asyncapi/parser';
import { describe, expect, it } from 'vitest';
import { validateAsyncApi } from './lib/asyncapi.ts';
import { run } from './lib/run.ts';
import { GENERATED_DIR, OPENAPI_DOCS, bin } from './lib/specs.ts';

type Json = Record<string, unknown>;

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refs(n, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe('generated/openapi/<api>.bundled.json', () => {
  it.each(OPENAPI_DOCS.map((d) => [d.name]))('%s keeps local $refs to named components and lints clean with redocly', async (name) => {
    const file = path.join(GENERATED_DIR, 'openapi', `${name}.bundled.json`);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Json;
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter((r) => !r.startsWith('#/'))).toEqual([]);
    const schemas = ((doc.components as Json).schemas ?? {}) as Json;
    expect(Object.keys(schemas)).toContain('Problem');
    // Every reference resolves inside the file.
    for (const r of new Set(all)) {
      const target = r.slice(2).split('/').reduce<unknown>((node, seg) => (node as Json | undefined)?.[seg.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      expect(target, r).toBeDefined();
    }
    const result = await run(bin('redocly'), ['lint', file, '--format=json']);
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);
});

describe('generated/asyncapi/webhooks.bundled.json', () => {
  const file = path.join(GENERATED_DIR, 'asyncapi', 'webhooks.bundled.json');

  it('validates with @asyncapi/parser with zero errors and zero warnings', async () => {
    const result = await validateAsyncApi(file);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('keeps operations’ channel and messages and channels’ servers as references, and no external ones', () => {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as {
      operations: Record<string, { channel: Json; messages: Json[] }>;
      channels: Record<string, { servers: Json[]; messages: Record<string, Json> }>;
    };
    expect(refs(doc).filter((r) => !r.startsWith('#/'))).toEqual([]);
    for (const [name, op] of Object.entries(doc.operations)) {
      expect(op.channel, name).toEqual({ $ref: expect.stringMatching(/^#\/channels\/[A-Za-z]+$/) });
      for (const m of op.messages) expect(m, name).toEqual({ $ref: expect.stringMatching(/^#\/channels\/[A-Za-z]+\/messages\/[A-Za-z]+$/) });
    }
    for (const [name, channel] of Object.entries(doc.channels)) {
      for (const s of channel.servers) expect(s, name).toEqual({ $ref: expect.stringMatching(/^#\/servers\/[A-Za-z]+$/) });
      for (const m of Object.values(channel.messages)) expect(m, name).toEqual({ $ref: expect.stringMatching(/^#\/components\/messages\/[A-Za-z]+$/) });
    }
  });

  it('re-parsed, has its 8 messages once each and every operation keeps its channel and messages', async () => {
    const { document } = await fromFile(new Parser(), file, { encoding: 'utf8' }).parse();
    expect(document).toBeDefined();
    if (document === undefined) return;
    expect(document.allMessages().all().map((m) => m.id()).sort()).toEqual(['orderCreated', 'orderPaid', 'orderPaymentReviewRequired', 'payoutCompleted', 'webhookEndpointDisabled', 'webhookEndpointFailing', 'webhookEndpointRecovered', 'webhookTest']);
    const ops = Object.fromEntries(
      document.operations().all().map((op) => [op.id(), { channels: op.channels().all().map((c) => c.id()), messages: op.messages().all().map((m) => m.id()).sort() }]),
    );
    expect(ops).toEqual({
      sendOrderWebhook: { channels: ['orderWebhooks'], messages: ['orderCreated', 'orderPaid', 'orderPaymentReviewRequired', 'webhookEndpointDisabled', 'webhookEndpointFailing', 'webhookEndpointRecovered', 'webhookTest'] },
      sendPayoutCompletedCallback: { channels: ['payoutCompleted'], messages: ['payoutCompleted'] },
    });
    for (const channel of document.channels().all()) expect(channel.servers().all().length, channel.id()).toBe(1);
  });
});
