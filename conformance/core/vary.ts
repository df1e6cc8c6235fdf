// Schema-driven variations of a documented example, with fast-check.
//
// Starting from an example, every leaf that the schema leaves open gets a new value drawn
// within the schema (patterns, formats, lengths, bounds, the x-decimal rule); `const` and
// `enum` values keep the example's value, because they carry the event's meaning (type,
// status). Optional properties are sometimes left out: consumers must treat optional fields
// as optional. The key order of the example is kept (the service writes keys in the order
// the spec shows them). Every leaf is checked against its own schema and falls back to the
// example's value when a draw does not fit, so a variation is always as valid as the example.
import fc from 'fast-check';
import type { ValidateFunction } from 'ajv';
import { createSuiteAjv } from './ajv.ts';
import type { JsonSchema } from './asyncapi.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Dates of generated timestamps: the year of the documented examples. */
const DATE_MIN = new Date('2026-01-01T00:00:00.000Z');
const DATE_MAX = new Date('2026-12-31T23:59:59.999Z');

export class Variator {
  readonly #ajv = createSuiteAjv();
  readonly #byText = new Map<string, ValidateFunction>();
  readonly #byObject = new WeakMap<JsonSchema, ValidateFunction>();

  /** Whether `value` is valid under `schema` (the suite's Ajv setup, x-decimal included). */
  valid(schema: JsonSchema, value: unknown): boolean {
    return this.#validator(schema)(value) === true;
  }

  /** Validation errors, as `pointer message` lines (empty when valid). */
  errors(schema: JsonSchema, value: unknown): string[] {
    const validate = this.#validator(schema);
    validate(value);
    return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
  }

  #validator(schema: JsonSchema): ValidateFunction {
    let validate = this.#byObject.get(schema);
    if (validate) return validate;
    const key = JSON.stringify(schema);
    validate = this.#byText.get(key);
    if (!validate) {
      validate = this.#ajv.compile(stripIds(schema));
      this.#byText.set(key, validate);
    }
    this.#byObject.set(schema, validate);
    return validate;
  }

  /** An arbitrary of variations of `example` within `schema`. */
  arbitrary(schema: JsonSchema, example: unknown): fc.Arbitrary<unknown> {
    return this.#node(schema, example);
  }

  /** `count` variations, reproducible from `seed`. */
  sample(schema: JsonSchema, example: unknown, seed: number, count: number): unknown[] {
    if (count <= 0) return [];
    return fc.sample(this.arbitrary(schema, example), { seed, numRuns: count });
  }

  #node(schema: JsonSchema, example: unknown): fc.Arbitrary<unknown> {
    if ('const' in schema || Array.isArray(schema.enum)) return fc.constant(example);
    if (Array.isArray(schema.allOf)) {
      // A narrowing (allOf of a base and its constraints): vary within the merged branches and
      // keep only draws that the whole schema accepts.
      return this.#node(mergeAllOf(schema), example).map((value) => (this.valid(schema, value) ? value : example));
    }
    if (isObj(example) && isObj(schema.properties)) return this.#object(schema, example);
    if (Array.isArray(example) && isObj(schema.items)) {
      const items = schema.items;
      return fc.tuple(...example.map((item) => this.#node(items, item))).map((values) => values as unknown);
    }
    const leaf = leafArbitrary(schema, example);
    if (!leaf) return fc.constant(example);
    // A draw that does not fit the leaf's schema (lengths, bounds) is replaced by the example.
    return leaf.map((value) => (this.valid(schema, value) ? value : example));
  }

  #object(schema: JsonSchema, example: Obj): fc.Arbitrary<unknown> {
    const properties = schema.properties as Record<string, JsonSchema>;
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const keys = Object.keys(example);
    const parts = keys.map((key) => {
      const propertySchema = properties[key];
      const value = propertySchema ? this.#node(propertySchema, example[key]) : fc.constant(example[key]);
      // Optional properties are kept two times out of three.
      const keep = required.has(key) || !propertySchema ? fc.constant(true) : fc.nat({ max: 2 }).map((n) => n > 0);
      return fc.tuple(keep, value);
    });
    return fc.tuple(...parts).map((entries) => {
      const out: Obj = {};
      entries.forEach(([keep, value], i) => {
        if (keep) out[keys[i] as string] = value;
      });
      return out;
    });
  }
}

/** The branches of an allOf as one schema; a property fixed by `const` or `enum` in any branch stays fixed. */
function mergeAllOf(schema: JsonSchema): JsonSchema {
  const { allOf, ...rest } = schema;
  let merged: JsonSchema = { ...rest };
  for (const raw of allOf as unknown[]) {
    if (!isObj(raw)) continue;
    const branch = Array.isArray(raw.allOf) ? mergeAllOf(raw) : raw;
    const properties: Record<string, JsonSchema> = { ...(isObj(merged.properties) ? (merged.properties as Record<string, JsonSchema>) : {}) };
    for (const [key, value] of Object.entries(isObj(branch.properties) ? branch.properties : {})) {
      if (!isObj(value)) continue;
      const fixed = 'const' in value || Array.isArray(value.enum);
      if (!(key in properties) || fixed) properties[key] = value;
    }
    const required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...(Array.isArray(branch.required) ? branch.required : [])])];
    merged = { ...branch, ...merged, ...(Object.keys(properties).length > 0 ? { properties } : {}), ...(required.length > 0 ? { required } : {}) };
  }
  return merged;
}

function leafArbitrary(schema: JsonSchema, example: unknown): fc.Arbitrary<unknown> | undefined {
  const type = schema.type;
  if (type === 'boolean') return fc.boolean();
  if (type === 'integer') {
    const min = typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 0;
    const max = typeof schema.maximum === 'number' ? Math.floor(schema.maximum) : 2 ** 31 - 1;
    return fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) });
  }
  if (type === 'number') return decimalArbitrary(schema);
  if (type !== 'string') return undefined;
  const format = schema.format;
  if (format === 'uuid') return fc.uuid({ version: 4 });
  if (format === 'date-time') return fc.date({ min: DATE_MIN, max: DATE_MAX, noInvalidDate: true }).map((d) => d.toISOString());
  if (typeof format === 'string') return undefined; // uri, email, ...: keep the example
  if (typeof schema.pattern === 'string') {
    const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
    return patternArbitrary(schema.pattern).map((s) => (maxLength !== undefined && s.length > maxLength ? s.slice(0, maxLength) : s));
  }
  // Free text (references, asset names): mostly the example's shape with other characters,
  // sometimes any Unicode text, which exercises verification over the raw UTF-8 bytes.
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === 'number' ? Math.min(schema.maxLength, 64) : 64;
  const shaped = typeof example === 'string' && example !== '' ? sameShape(example) : fc.string({ minLength, maxLength });
  return fc.oneof(
    { weight: 3, arbitrary: shaped },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: Math.max(minLength, 1), maxLength: Math.max(minLength, Math.min(maxLength, 24)) }) },
  );
}

const patternArbitraries = new Map<string, fc.Arbitrary<string>>();

/** Strings matching a schema pattern (building one parses the pattern, so they are kept). */
export function patternArbitrary(pattern: string): fc.Arbitrary<string> {
  let arb = patternArbitraries.get(pattern);
  if (!arb) {
    arb = fc.stringMatching(new RegExp(pattern));
    patternArbitraries.set(pattern, arb);
  }
  return arb;
}

/** The example with each letter or digit replaced by another of the same class. */
function sameShape(example: string): fc.Arbitrary<string> {
  const chars = [...example];
  const draws = chars.map((c) => {
    if (/[0-9]/.test(c)) return fc.constantFrom(...'0123456789');
    if (/[a-z]/.test(c)) return fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz');
    if (/[A-Z]/.test(c)) return fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ');
    return fc.constant(c);
  });
  return fc.tuple(...draws).map((parts) => parts.join(''));
}

/**
 * An exact decimal JSON number within the schema: at most `x-decimal.maxScale` places and
 * `maxSignificantDigits` digits, within the bounds. Built from its decimal text, so the
 * number `JSON.stringify` writes is exactly that text.
 */
function decimalArbitrary(schema: JsonSchema): fc.Arbitrary<number> {
  const rule = isObj(schema['x-decimal']) ? schema['x-decimal'] : {};
  const maxScale = typeof rule.maxScale === 'number' ? rule.maxScale : 2;
  const maxDigits = typeof rule.maxSignificantDigits === 'number' ? Math.min(rule.maxSignificantDigits, 15) : 15;
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : 1e12;
  return fc
    .tuple(fc.integer({ min: 0, max: maxScale }), fc.integer({ min: 1, max: 10 ** Math.min(maxDigits, 15) - 1 }))
    .map(([scale, digits]) => {
      const text = String(digits).padStart(scale + 1, '0');
      const value = Number(scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`);
      return value > maximum ? maximum : value;
    })
    .filter((v) => v > 0);
}

/** Ajv refuses a second schema with the same `$id`; leaves never need theirs. */
function stripIds(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema, (k, v: unknown) => (k === '$id' || k === '$schema' ? undefined : v))) as JsonSchema;
}
