// Invalid requests generated from an operation's schemas: for each body field and each path or
// query parameter, one case per constraint it has (required, type, bounds, lengths, pattern,
// format, enum, the x-decimal rule) plus an unknown field for a closed body and a body that is
// not an object. Each case changes exactly one thing of a valid request; the value is drawn
// with fast-check from the run's seed, and the checks confirm with the contract's own
// validator that the request is invalid where the case says, before sending it.
import fc from 'fast-check';
import type { ApiOperation, JsonSchema, ParameterSpec } from '../core/openapi/contract.ts';
import type { RequestParts } from '../core/openapi/requests.ts';
import { draw } from '../core/openapi/requests.ts';
import { clone, constraints, isObj, isType } from '../core/openapi/schema.ts';
import type { Constraints } from '../core/openapi/schema.ts';

export type InvalidKind =
  | 'missing'
  | 'wrong-type'
  | 'below-minimum'
  | 'above-maximum'
  | 'too-long'
  | 'too-short'
  | 'pattern'
  | 'format'
  | 'unknown-enum'
  | 'wrong-const'
  | 'too-precise'
  | 'unknown-field'
  | 'not-an-object';

export interface InvalidCase {
  /** `body.amount.below-minimum`, `query.limit.above-maximum`, `path.orderId.format`, `body.unknown-field` */
  key: string;
  location: 'body' | 'query' | 'path';
  /** The JSON pointer the problem's `errors` must name, e.g. `/body/amount`. */
  pointer: string;
  kind: InvalidKind;
  /** What is wrong, for the check title: `amount below its minimum (exclusiveMinimum 0)`. */
  what: string;
  /** The contract's own `x-decimal` keyword: a generic mock cannot honour it. */
  customKeyword: boolean;
  /** The valid request with the defect, values drawn from `seed`. */
  apply(parts: RequestParts, seed: number): RequestParts;
}

export function invalidCases(op: ApiOperation): InvalidCase[] {
  const cases: InvalidCase[] = [];
  for (const p of op.spec.parameters) {
    if (p.in === 'path' || p.in === 'query') cases.push(...parameterCases(p));
  }
  if (op.spec.requestBody) cases.push(...bodyCases(op.spec.requestBody.schema));
  return cases;
}

// ---- body ---------------------------------------------------------------------------------

function bodyCases(schema: JsonSchema): InvalidCase[] {
  const c = constraints(schema);
  const cases: InvalidCase[] = [];
  if (isType(c, 'object') || Object.keys(c.properties).length > 0 || c.alternatives) {
    cases.push({
      key: 'body.not-an-object',
      location: 'body',
      pointer: '/body',
      kind: 'not-an-object',
      what: 'a JSON body that is not an object',
      customKeyword: false,
      apply: (parts, seed) => ({ ...parts, body: draw(fc.constantFrom<unknown>([], 'text', 42, true), seed) }),
    });
  }
  cases.push(...objectCases(schema, []));
  return cases;
}

function objectCases(schema: JsonSchema, at: string[]): InvalidCase[] {
  const c = constraints(schema);
  const cases: InvalidCase[] = [];
  const where = at.length === 0 ? 'the body' : at.join('.');
  if (c.closed || c.alternatives) {
    cases.push({
      key: ['body', ...at, 'unknown-field'].join('.'),
      location: 'body',
      pointer: `/body${at.map((s) => `/${s}`).join('')}`,
      kind: 'unknown-field',
      what: `an unknown extra field in ${where}`,
      customKeyword: false,
      apply: (parts, seed) => {
        const known = new Set(Object.keys(c.properties));
        const name = draw(fc.stringMatching(/^[a-z][a-zA-Z]{3,14}$/).filter((n) => !known.has(n)), seed);
        return withBody(parts, (body) => {
          const target = getAt(body, at);
          if (isObj(target)) target[name] = draw(fc.constantFrom<unknown>('unexpected', 1, true), seed + 1);
        });
      },
    });
  }
  if (c.alternatives) return cases; // oneOf/anyOf: the fields belong to alternatives; only the whole is tested
  for (const [name, prop] of Object.entries(c.properties)) {
    const path = [...at, name];
    const pc = constraints(prop);
    if (c.required.includes(name)) {
      cases.push(bodyCase(path, 'missing', `${path.join('.')} missing (required)`, false, (body) => deleteAt(body, path)));
    }
    for (const gen of valueGenerators(pc)) {
      cases.push(
        bodyCase(path, gen.kind, `${path.join('.')} ${gen.what}`, gen.customKeyword, (body, seed) => {
          setAt(body, path, gen.value(getAt(body, path), seed));
        }),
      );
    }
    if (isObj(prop) && Object.keys(pc.properties).length > 0) cases.push(...objectCases(prop, path));
  }
  return cases;
}

function bodyCase(path: string[], kind: InvalidKind, what: string, customKeyword: boolean, change: (body: unknown, seed: number) => void): InvalidCase {
  return {
    key: ['body', ...path, kind].join('.'),
    location: 'body',
    pointer: `/body/${path.join('/')}`,
    kind,
    what,
    customKeyword,
    apply: (parts, seed) => withBody(parts, (body) => change(body, seed)),
  };
}

function withBody(parts: RequestParts, change: (body: unknown) => void): RequestParts {
  const body = clone(parts.body ?? {});
  change(body);
  return { ...parts, body };
}

function getAt(value: unknown, path: string[]): unknown {
  let v = value;
  for (const s of path) v = isObj(v) ? v[s] : undefined;
  return v;
}

function setAt(value: unknown, path: string[], next: unknown): void {
  let v = value;
  for (const s of path.slice(0, -1)) {
    if (!isObj(v)) return;
    if (!isObj(v[s])) v[s] = {};
    v = v[s];
  }
  const last = path[path.length - 1];
  if (isObj(v) && last !== undefined) v[last] = next;
}

function deleteAt(value: unknown, path: string[]): void {
  const parent = getAt(value, path.slice(0, -1));
  const last = path[path.length - 1];
  if (isObj(parent) && last !== undefined) delete parent[last];
}

// ---- parameters ---------------------------------------------------------------------------

function parameterCases(p: ParameterSpec): InvalidCase[] {
  const c = constraints(p.schema);
  const loc = p.in as 'path' | 'query';
  const cases: InvalidCase[] = [];
  const make = (kind: InvalidKind, what: string, customKeyword: boolean, value: (current: string | undefined, seed: number) => string | undefined): InvalidCase => ({
    key: `${loc}.${p.name}.${kind}`,
    location: loc,
    pointer: `/${loc}/${p.name}`,
    kind,
    what: `${p.in} parameter ${p.name} ${what}`,
    customKeyword,
    apply: (parts, seed) => {
      const bag = { ...(loc === 'path' ? parts.path : parts.query) };
      const next = value(bag[p.name], seed);
      if (next === undefined) delete bag[p.name];
      else bag[p.name] = next;
      return loc === 'path' ? { ...parts, path: bag } : { ...parts, query: bag };
    },
  });
  if (loc === 'query' && p.required) cases.push(make('missing', 'missing (required)', false, () => undefined));
  // A parameter is text on the wire: its wrong type is text that does not read as its type.
  if (isType(c, 'number')) {
    const integer = c.types.includes('integer') && !c.types.includes('number');
    cases.push(make('wrong-type', `not a number`, false, (_, seed) => draw(fc.constantFrom('abc', 'ten', ...(integer ? ['1.5'] : [])), seed)));
  } else if (isType(c, 'boolean')) {
    cases.push(make('wrong-type', `not a boolean`, false, (_, seed) => draw(fc.constantFrom('yes', 'maybe'), seed)));
  }
  for (const gen of valueGenerators(c, loc === 'path')) {
    if (gen.kind === 'wrong-type') continue;
    if (gen.kind === 'too-short' && loc === 'path') continue; // an empty segment is another route
    cases.push(
      make(gen.kind, gen.what, gen.customKeyword, (current, seed) => {
        const v = gen.value(current === undefined ? undefined : parseParam(c, current), seed);
        return typeof v === 'string' ? v : JSON.stringify(v);
      }),
    );
  }
  return cases;
}

function parseParam(c: Constraints, raw: string): unknown {
  if (isType(c, 'number') && raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  return raw;
}

// ---- values -------------------------------------------------------------------------------

interface ValueGenerator {
  kind: InvalidKind;
  what: string;
  customKeyword: boolean;
  value(current: unknown, seed: number): unknown;
}

/** Characters rejected by the identifier patterns of the contract, safe inside a URL path segment once encoded. */
const PATH_FORBIDDEN = ['!', '*', '~', '@', ',', '$', ':', ' ', "'", '('];
const BODY_FORBIDDEN = [' ', '#', '%', '"', '<', '>', 'é', '\\', '|', '^', '\u0000', '\n'];

function valueGenerators(c: Constraints, inPath = false): ValueGenerator[] {
  const gens: ValueGenerator[] = [];
  const numeric = isType(c, 'number');
  if (c.types.length > 0) {
    gens.push({
      kind: 'wrong-type',
      what: `of the wrong type (not ${c.types.join(' or ')})`,
      customKeyword: false,
      value: (current, seed) => {
        const options: unknown[] = [];
        if (!isType(c, 'string')) options.push(numeric ? String(current ?? 1) : 'text');
        if (!numeric) options.push(draw(fc.integer({ min: 1, max: 99999 }), seed));
        if (!isType(c, 'boolean')) options.push(true);
        if (!c.types.includes('null')) options.push(null);
        if (!isType(c, 'array')) options.push([current ?? 'x']);
        if (!isType(c, 'object')) options.push({});
        return draw(fc.constantFrom(...options), seed + 1);
      },
    });
  }
  if (numeric) {
    const integer = c.types.includes('integer') && !c.types.includes('number');
    if (c.exclusiveMinimum !== undefined || c.minimum !== undefined) {
      const bound = c.exclusiveMinimum ?? (c.minimum as number);
      const exclusive = c.exclusiveMinimum !== undefined;
      gens.push({
        kind: 'below-minimum',
        what: `below its minimum (${exclusive ? 'exclusiveMinimum' : 'minimum'} ${bound})`,
        customKeyword: false,
        value: (_, seed) => {
          const steps = integer ? [1, 2, 10] : [1, 0.5, 100];
          const below = draw(fc.constantFrom(...steps), seed);
          return exclusive ? draw(fc.constantFrom(bound, bound - below), seed + 1) : bound - below;
        },
      });
    }
    if (c.exclusiveMaximum !== undefined || c.maximum !== undefined) {
      const bound = c.exclusiveMaximum ?? (c.maximum as number);
      const exclusive = c.exclusiveMaximum !== undefined;
      gens.push({
        kind: 'above-maximum',
        what: `above its maximum (${exclusive ? 'exclusiveMaximum' : 'maximum'} ${bound})`,
        customKeyword: false,
        value: (_, seed) => {
          const above = draw(fc.constantFrom(1, 2, 10), seed);
          return exclusive ? draw(fc.constantFrom(bound, bound + above), seed + 1) : bound + above;
        },
      });
    }
    if (c.decimal) {
      const rule = c.decimal;
      gens.push({
        kind: 'too-precise',
        what: `with more than ${rule.maxScale} decimal places (x-decimal)`,
        customKeyword: true,
        value: (current, seed) => {
          const whole = Math.max(1, Math.min(999, Math.floor(typeof current === 'number' ? Math.abs(current) : 1)));
          const digits = draw(fc.stringMatching(new RegExp(`^[0-9]{${rule.maxScale}}[1-9]$`)), seed);
          return Number(`${whole}.${digits}`);
        },
      });
    }
  }
  if (isType(c, 'string') && !c.enum && !c.hasConst) {
    if (c.maxLength !== undefined && c.maxLength < 60_000) {
      const max = c.maxLength;
      gens.push({
        kind: 'too-long',
        what: `longer than maxLength ${max}`,
        customKeyword: false,
        value: (current, seed) => longer(c, typeof current === 'string' ? current : '', max + draw(fc.integer({ min: 1, max: 4 }), seed)),
      });
    }
    if (c.minLength !== undefined && c.minLength > 0) {
      const min = c.minLength;
      gens.push({
        kind: 'too-short',
        what: `shorter than minLength ${min}`,
        customKeyword: false,
        value: (current) => (typeof current === 'string' ? current : 'a'.repeat(min)).slice(0, min - 1),
      });
    }
    if (c.patterns.length > 0 && !c.format) {
      const patterns = c.patterns.map((p) => new RegExp(p, 'u'));
      const forbidden = inPath ? PATH_FORBIDDEN : BODY_FORBIDDEN;
      gens.push({
        kind: 'pattern',
        what: `not matching its pattern ${c.patterns.map((p) => `/${p}/`).join(' and ')}`,
        customKeyword: false,
        value: (current, seed) => {
          const base = typeof current === 'string' && current !== '' ? current : 'a';
          const bad = forbidden.filter((ch) => patterns.some((re) => !re.test(`${base}${ch}`)));
          const ch = draw(fc.constantFrom(...(bad.length > 0 ? bad : [' '])), seed);
          const at = draw(fc.integer({ min: 0, max: base.length - 1 }), seed + 1);
          // Replace rather than insert: the length stays within its bounds.
          return `${base.slice(0, at)}${ch}${base.slice(at + 1)}`;
        },
      });
    }
    const badFormat = formatBreaker(c.format);
    if (badFormat) {
      gens.push({ kind: 'format', what: `not a valid ${c.format}`, customKeyword: false, value: (current, seed) => badFormat(typeof current === 'string' ? current : '', seed) });
    }
  }
  if (c.enum && c.enum.length > 0 && c.enum.every((v) => typeof v === 'string')) {
    const values = c.enum as string[];
    gens.push({
      kind: 'unknown-enum',
      what: `not one of its values (${values.join(', ')})`,
      customKeyword: false,
      value: (_, seed) => {
        const first = values[0] ?? 'value';
        const candidates = [first.toUpperCase(), `${first}_other`, `un${first}`, 'unknown'].filter((v) => !values.includes(v));
        return draw(fc.constantFrom(...candidates), seed);
      },
    });
  }
  if (c.hasConst && (typeof c.const === 'boolean' || typeof c.const === 'string')) {
    const constant = c.const;
    gens.push({
      kind: 'wrong-const',
      what: `not its only allowed value ${JSON.stringify(constant)}`,
      customKeyword: false,
      value: () => (typeof constant === 'boolean' ? !constant : `${constant}x`),
    });
  }
  return gens;
}

/** A string of exactly `length` characters, otherwise as valid as `current` (same characters, same format). */
function longer(c: Constraints, current: string, length: number): string {
  if (c.format === 'uri') {
    const prefix = 'https://hooks.merchant.example/';
    return prefix + 'a'.repeat(Math.max(1, length - prefix.length));
  }
  if (c.format === 'email') {
    const domain = '@mail.example';
    return 'a'.repeat(Math.max(1, length - domain.length)) + domain;
  }
  const unit = current !== '' ? current : 'a';
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

function formatBreaker(format: string | undefined): ((current: string, seed: number) => string) | null {
  switch (format) {
    case 'uuid':
      return (current, seed) => {
        const base = current.length === 36 ? current : '3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90';
        const positions = [...base].map((ch, i) => (ch === '-' ? -1 : i)).filter((i) => i >= 0);
        const at = draw(fc.constantFrom(...positions), seed);
        return `${base.slice(0, at)}${draw(fc.constantFrom('g', 'z', 'x'), seed + 1)}${base.slice(at + 1)}`;
      };
    case 'email':
      return (current, seed) => draw(fc.constantFrom((current || 'maria.santos@mail.example').replace('@', '.'), 'maria.santos@', '@mail.example'), seed);
    case 'uri':
      return (_, seed) => draw(fc.constantFrom('hooks.merchant.example/payouts/completed', 'https://hooks merchant.example/x', '//hooks.merchant.example/x'), seed);
    case 'date-time':
      return (_, seed) => draw(fc.constantFrom('2026-13-40T25:61:00Z', '22/11/2026 08:15', '2026-11-22'), seed);
    default:
      return null;
  }
}
