// The absent-versus-null rule of spec/README.md, checked over every bundled document so the
// documents cannot drift apart: payloads and the Transactions, order and sandbox resources never
// admit null (a page's nextCursor excepted); management resources carry every field (null when
// unset), except inside a delivery's payload; problem details and requests never admit null
// (an endpoint PATCH's maxPerSecond excepted: null removes the cap).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_NAMES } from '../generated/vocabulary.ts';
import { GENERATED_DIR } from './lib/specs.ts';

type Json = Record<string, unknown>;

const load = (file: string): Json => JSON.parse(readFileSync(path.join(GENERATED_DIR, file), 'utf8')) as Json;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function admitsNull(s: Json): boolean {
  return s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null')) || s.const === null || (Array.isArray(s.enum) && s.enum.includes(null));
}

/** Visits every subschema with its JSON pointer-ish path (examples skipped). */
function walk(schema: unknown, at: string, visit: (s: Json, at: string) => void): void {
  if (Array.isArray(schema)) return schema.forEach((x, i) => walk(x, `${at}/${i}`, visit));
  if (!isObj(schema)) return;
  visit(schema, at);
  for (const [k, v] of Object.entries(schema)) if (k !== 'examples' && k !== 'example') walk(v, `${at}/${k}`, visit);
}

/** Paths where a schema admits null, but not as the whole of a property named in `allowed`. */
function nullables(schema: unknown, at: string, allowed: readonly string[] = []): string[] {
  const found: string[] = [];
  walk(schema, at, (s, p) => {
    if (!admitsNull(s)) return;
    const property = /\/properties\/([^/]+)(?:\/(?:anyOf|oneOf)\/\d+)?$/.exec(p)?.[1];
    if (property === undefined || !allowed.includes(property)) found.push(p);
  });
  return found;
}

/** The one request field whose null means something: it removes the endpoint's rate cap. */
const CLEARING: Readonly<Record<string, readonly string[]>> = { 'management: patch /v2/webhooks/endpoints/{endpointId} request': ['maxPerSecond'] };

interface Part {
  where: string;
  schema: unknown;
  success: boolean;
}

/** Every request and response schema of an OpenAPI bundle. */
function parts(doc: Json): Part[] {
  const out: Part[] = [];
  for (const [p, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (!isObj(op) || !isObj(op.responses)) continue;
      for (const param of (op.parameters as Json[] | undefined) ?? []) out.push({ where: `${method} ${p} parameter ${String(param.name)}`, schema: param.schema, success: false });
      if (isObj(op.requestBody)) out.push({ where: `${method} ${p} request`, schema: op.requestBody, success: false });
      for (const [status, r] of Object.entries(op.responses)) out.push({ where: `${method} ${p} ${status}`, schema: r, success: status.startsWith('2') });
    }
  }
  return out;
}

describe('absent versus null (spec/README.md)', () => {
  it('payloads, Transactions, order and sandbox answers, problems and requests never admit null (nextCursor and the cap removal excepted)', () => {
    const found: string[] = [];
    for (const api of API_NAMES) {
      for (const part of parts(load(`openapi/${api}.json`))) {
        // Management answers follow rule 2, checked below.
        if (api === 'management' && part.success) continue;
        const where = `${api}: ${part.where}`;
        found.push(...nullables(part.schema, where, part.success ? ['nextCursor'] : (CLEARING[where] ?? [])));
      }
    }
    const events = load('asyncapi/webhooks.json');
    for (const [name, message] of Object.entries((events.components as Json).messages as Json)) found.push(...nullables((message as Json).payload, `webhooks: ${name}`));
    expect(found).toEqual([]);
  });

  it('management answers carry every field they define, except inside a delivery payload', () => {
    const optional: string[] = [];
    for (const part of parts(load('openapi/management.json'))) {
      if (!part.success) continue;
      walk(part.schema, part.where, (s, at) => {
        if (!isObj(s.properties) || /\/properties\/payload(\/|$)/.test(at)) return;
        const required = new Set((s.required as string[] | undefined) ?? []);
        for (const key of Object.keys(s.properties)) if (!required.has(key)) optional.push(`${at}: ${key}`);
      });
    }
    expect(optional).toEqual([]);
  });

  it('finds what breaks the rule (the check is not vacuous)', () => {
    expect(nullables({ type: 'object', properties: { a: { type: ['string', 'null'] }, nextCursor: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }, 'x', ['nextCursor'])).toEqual([
      'x/properties/a',
    ]);
    expect(nullables({ type: 'object', properties: { a: { type: ['string', 'null'] } } }, 'x')).toEqual(['x/properties/a']);
  });
});
