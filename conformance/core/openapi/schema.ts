// Reading the constraints of a (dereferenced) JSON Schema the way the invalid-request
// generator needs them: `allOf` merged into one set of constraints, the contract's `x-decimal`
// rule, and a cached validator per schema (the suite's own Ajv setup, x-decimal included).
import type { ValidateFunction } from 'ajv';
import { createSuiteAjv } from '../ajv.ts';
import type { JsonSchema } from './contract.ts';

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface DecimalRule {
  maxScale: number;
  maxSignificantDigits: number;
}

/** The constraints of a schema with its `allOf` branches merged (the most restrictive wins). */
export interface Constraints {
  types: string[];
  enum?: unknown[];
  hasConst: boolean;
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  patterns: string[];
  format?: string;
  decimal?: DecimalRule;
  properties: Record<string, JsonSchema>;
  required: string[];
  /** `additionalProperties: false` or `unevaluatedProperties: false`. */
  closed: boolean;
  /** `oneOf`/`anyOf` alternatives: the generator only tests the object as a whole then. */
  alternatives: boolean;
}

export function constraints(schema: JsonSchema): Constraints {
  const c: Constraints = { types: [], hasConst: false, patterns: [], properties: {}, required: [], closed: false, alternatives: false };
  merge(c, schema);
  return c;
}

function merge(c: Constraints, s: JsonSchema): void {
  if (typeof s.type === 'string') c.types = intersect(c.types, [s.type]);
  else if (Array.isArray(s.type)) c.types = intersect(c.types, s.type.filter((t): t is string => typeof t === 'string'));
  if (Array.isArray(s.enum)) c.enum = s.enum;
  if ('const' in s) {
    c.hasConst = true;
    c.const = s.const;
  }
  const num = (k: string): number | undefined => (typeof s[k] === 'number' ? (s[k] as number) : undefined);
  const min = num('minimum');
  if (min !== undefined) c.minimum = c.minimum === undefined ? min : Math.max(c.minimum, min);
  const max = num('maximum');
  if (max !== undefined) c.maximum = c.maximum === undefined ? max : Math.min(c.maximum, max);
  const xmin = num('exclusiveMinimum');
  if (xmin !== undefined) c.exclusiveMinimum = c.exclusiveMinimum === undefined ? xmin : Math.max(c.exclusiveMinimum, xmin);
  const xmax = num('exclusiveMaximum');
  if (xmax !== undefined) c.exclusiveMaximum = c.exclusiveMaximum === undefined ? xmax : Math.min(c.exclusiveMaximum, xmax);
  const minLength = num('minLength');
  if (minLength !== undefined) c.minLength = Math.max(c.minLength ?? 0, minLength);
  const maxLength = num('maxLength');
  if (maxLength !== undefined) c.maxLength = c.maxLength === undefined ? maxLength : Math.min(c.maxLength, maxLength);
  if (typeof s.pattern === 'string') c.patterns.push(s.pattern);
  if (typeof s.format === 'string') c.format = s.format;
  const dec = s['x-decimal'];
  if (isObj(dec) && typeof dec.maxScale === 'number' && typeof dec.maxSignificantDigits === 'number') {
    c.decimal = { maxScale: dec.maxScale, maxSignificantDigits: dec.maxSignificantDigits };
  }
  if (isObj(s.properties)) Object.assign(c.properties, s.properties);
  if (Array.isArray(s.required)) c.required = [...new Set([...c.required, ...s.required.filter((r): r is string => typeof r === 'string')])];
  if (s.additionalProperties === false || s.unevaluatedProperties === false) c.closed = true;
  if (Array.isArray(s.oneOf) || Array.isArray(s.anyOf)) c.alternatives = true;
  if (Array.isArray(s.allOf)) for (const branch of s.allOf) if (isObj(branch)) merge(c, branch);
}

function intersect(a: string[], b: string[]): string[] {
  if (a.length === 0) return [...b];
  // `integer` is a `number`.
  return a.filter((t) => b.includes(t) || (t === 'integer' && b.includes('number')));
}

export function isType(c: Constraints, type: string): boolean {
  return c.types.includes(type) || (type === 'number' && c.types.includes('integer'));
}

// ---- validation ---------------------------------------------------------------------------

const ajv = createSuiteAjv();
const validators = new Map<string, ValidateFunction>();

/** Whether `value` is valid under `schema` (the suite's Ajv setup; no defaults filled in). */
export function validAgainst(schema: JsonSchema, value: unknown): boolean {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(stripIds(schema));
    validators.set(key, validate);
  }
  return validate(value) === true;
}

function stripIds(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema, (k, v: unknown) => (k === '$id' || k === '$schema' ? undefined : v))) as JsonSchema;
}

export function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
