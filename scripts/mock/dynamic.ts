// `Prefer: dynamic=true`: Prism generates a body from the response schema, and its generator
// does not know the contract's own keyword (`x-decimal`) and misses some schema rules (enums
// under composition, closed objects with `unevaluatedProperties`). Each generated body is checked
// with the server's own Ajv set-up (server/contract/ajv.ts: 2020-12, formats, x-decimal) and
// repaired where the error says how (an amount cut to its decimal rule, the first allowed enum
// value, an unevaluated property dropped); a body that cannot be repaired is generated again, and
// after GENERATION_TRIES the mock answers the documented example instead and says so in its log.
// It never sends an invalid body.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { createAjv } from '../../server/contract/ajv.ts';
import type { OperationSpec } from '../../server/contract/operations.ts';
import type { PrismAnswer, PrismEngine, PrismRequest } from './prism.ts';

export const GENERATION_TRIES = 3;
const REPAIR_ROUNDS = 6;

export interface DynamicOutcome {
  answer: PrismAnswer;
  /** Whether the body is a generated one (false: the documented example, none was valid). */
  generated: boolean;
  tries: number;
}

const ajv = createAjv({ defaults: false });
const validators = new WeakMap<object, ValidateFunction>();

function validatorFor(spec: OperationSpec, status: number): ValidateFunction | null {
  const response = spec.responses.find((r) => r.status === String(status));
  if (!response?.schema || typeof response.schema !== 'object') return null;
  const schema = response.schema as object;
  let v = validators.get(schema);
  if (!v) validators.set(schema, (v = ajv.compile(schema)));
  return v;
}

export async function dynamicAnswer(prism: PrismEngine, req: PrismRequest, spec: OperationSpec): Promise<DynamicOutcome> {
  for (let tries = 1; tries <= GENERATION_TRIES; tries++) {
    const answer = await prism.answer(req);
    const validate = validatorFor(spec, answer.status);
    if (validate === null) return { answer, generated: true, tries };
    if (repaired(validate, answer.body)) return { answer, generated: true, tries };
  }
  const answer = await prism.answer({ ...req, prefer: { ...req.prefer, dynamic: false }, callbacks: false });
  return { answer, generated: false, tries: GENERATION_TRIES };
}

/** Repairs `body` in place until it is valid; false when an error has no repair. */
export function repaired(validate: ValidateFunction, body: unknown): boolean {
  for (let round = 0; round < REPAIR_ROUNDS; round++) {
    if (validate(body)) return true;
    const errors = validate.errors ?? [];
    if (!errors.every((e) => repair(body, e))) return false;
  }
  return validate(body) === true;
}

type Container = Record<string, unknown> | unknown[];

function locate(body: unknown, pointer: string): { parent: Container; key: string } | null {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const key = parts.pop();
  if (key === undefined) return null;
  let at: unknown = body;
  for (const p of parts) at = (at as Record<string, unknown> | null)?.[p];
  return typeof at === 'object' && at !== null ? { parent: at as Container, key } : null;
}

function repair(body: unknown, e: ErrorObject): boolean {
  if (e.keyword === 'unevaluatedProperties' || e.keyword === 'additionalProperties') {
    const name = (e.params as { unevaluatedProperty?: string; additionalProperty?: string }).unevaluatedProperty ?? (e.params as { additionalProperty?: string }).additionalProperty;
    const at = locate(body, `${e.instancePath}/${name}`);
    if (at) delete (at.parent as Record<string, unknown>)[at.key];
    return at !== null;
  }
  const at = locate(body, e.instancePath);
  if (at === null) return false;
  const set = (value: unknown): true => {
    (at.parent as Record<string, unknown>)[at.key] = value;
    return true;
  };
  if (e.keyword === 'enum') return set((e.params as { allowedValues: unknown[] }).allowedValues[0]);
  if (e.keyword === 'const') return set((e.params as { allowedValue: unknown }).allowedValue);
  if (e.keyword === 'x-decimal') {
    const value = (at.parent as Record<string, unknown>)[at.key];
    const scale = Math.min((e.params as { maxScale?: number }).maxScale ?? 2, 2);
    return typeof value === 'number' && set(Math.max(Number(Math.abs(value % 100000).toFixed(scale)), 1));
  }
  // Errors that follow from another one in the same round (anyOf, oneOf, if) need no repair of their own.
  return e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if' || e.keyword === 'then' || e.keyword === 'else';
}
