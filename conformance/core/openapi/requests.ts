// A valid request of an operation, built from its documented examples:
// - path and required query parameters from the parameters' examples, `x-tenant-id` (when the
//   operation declares it) with the caller's tenant;
// - the body from the first documented request example, with optional URL fields left out (an
//   example host such as hooks.merchant.example resolves nowhere and would break the
//   destination rules) and every free identifier (a string with a `pattern`, such as
//   thirdPartyId or txHash) replaced by a seeded value of the same shape, so that repeated
//   requests never collide on a uniqueness rule.
// The state an operation needs (an existing order, a pending payout, ...) is filled in by
// fixtures.ts on top of this.
import fc from 'fast-check';
import type { ApiOperation, JsonSchema } from './contract.ts';
import { clone, constraints, isObj, validAgainst } from './schema.ts';

export interface RequestParts {
  path: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** The JSON body; undefined when the operation takes none. */
  body?: unknown;
}

export function exampleRequest(op: ApiOperation, opts: { seed: number; tenantId: string }): RequestParts {
  const parts: RequestParts = { path: {}, query: {}, headers: {} };
  // Of the parameters of `x-required-one-of`, the first is given as if it were required.
  const oneOf = op.spec.requiredOneOf?.parameters[0];
  for (const p of op.spec.parameters) {
    const example = op.paramExamples.get(`${p.in}:${p.name}`);
    if (p.in === 'path') parts.path[p.name] = example === undefined ? 'x' : String(example);
    else if (p.in === 'query' && (p.required || p.name === oneOf) && example !== undefined) parts.query[p.name] = String(example);
    else if (p.in === 'header' && p.name.toLowerCase() === 'x-tenant-id') parts.headers['x-tenant-id'] = opts.tenantId;
  }
  if (op.spec.requestBody) {
    const example = op.bodyExamples[0]?.value ?? {};
    const schema = op.spec.requestBody.schema;
    parts.body = freshen(schema, withoutOptionalUrls(schema, clone(example)), opts.seed);
  }
  return parts;
}

/** Leaves out optional `format: uri` properties (example URLs resolve nowhere). */
function withoutOptionalUrls(schema: JsonSchema, value: unknown): unknown {
  if (!isObj(value)) return value;
  const c = constraints(schema);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const prop = c.properties[k];
    if (prop && constraints(prop).format === 'uri' && !c.required.includes(k)) continue;
    out[k] = prop ? withoutOptionalUrls(prop, v) : v;
  }
  return out;
}

/** Replaces each patterned free string of `value` with a seeded value of the same shape that still fits its schema. */
export function freshen(schema: JsonSchema, value: unknown, seed: number): unknown {
  let n = 0;
  const walk = (s: JsonSchema, v: unknown): unknown => {
    const c = constraints(s);
    if (isObj(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, child] of Object.entries(v)) {
        const prop = c.properties[k];
        out[k] = prop ? walk(prop, child) : child;
      }
      return out;
    }
    if (typeof v !== 'string' || c.patterns.length === 0 || c.enum || c.hasConst || c.format) return v;
    n += 1;
    const draws = fc.sample(sameShape(v), { seed: (seed + n * 7919) >>> 0, numRuns: 8 });
    return draws.find((d) => d !== v && validAgainst(s, d)) ?? v;
  };
  return walk(schema, value);
}

/** The text with each letter or digit replaced by another of the same class. */
export function sameShape(text: string): fc.Arbitrary<string> {
  const chars = [...text];
  if (chars.length === 0) return fc.constant(text);
  return fc
    .tuple(
      ...chars.map((ch) => {
        if (/[0-9]/.test(ch)) return fc.constantFrom(...'0123456789');
        if (/[a-z]/.test(ch)) return fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz');
        if (/[A-Z]/.test(ch)) return fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ');
        return fc.constant(ch);
      }),
    )
    .map((parts) => parts.join(''));
}

/** A value drawn once from `arb`, reproducible from `seed`. */
export function draw<T>(arb: fc.Arbitrary<T>, seed: number): T {
  const [value] = fc.sample(arb, { seed: seed >>> 0, numRuns: 1 });
  if (value === undefined) throw new Error('fast-check drew nothing');
  return value;
}
