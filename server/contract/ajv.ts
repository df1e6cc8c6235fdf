// One Ajv setup for everything that checks values against the contract (server request and
// response validation, the conformance suite): JSON Schema 2020-12, formats, and the
// contract's own `x-decimal` keyword for exact amounts.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { decimalFromNumber, type DecimalRule } from '../money/decimal.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const formatsModule = addFormatsModule as unknown as FormatsPlugin | { default: FormatsPlugin };
const addFormats: FormatsPlugin = 'default' in formatsModule ? formatsModule.default : formatsModule;

export interface AjvOptions {
  /** Coerce strings to the schema's scalar types (query, path and header parameters). */
  coerce?: boolean;
  /** Fill in schema defaults (request bodies); off for responses, which must not be altered. */
  defaults?: boolean;
}

export function createAjv(opts: AjvOptions = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    coerceTypes: opts.coerce ? true : false,
    useDefaults: opts.defaults ?? true,
    validateFormats: true,
  });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: 'x-decimal',
    type: 'number',
    schemaType: 'object',
    errors: true,
    validate: function xDecimal(rule: DecimalRule, data: number): boolean {
      if (decimalFromNumber(data, rule) !== null) return true;
      (xDecimal as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        {
          keyword: 'x-decimal',
          message: `must have at most ${rule.maxScale} decimal places and ${rule.maxSignificantDigits} significant digits`,
          params: rule,
        },
      ];
      return false;
    },
  });
  // Documentation-only keywords that appear in the bundled documents.
  for (const k of ['example', 'x-problem-types']) ajv.addKeyword(k);
  return ajv;
}

export interface FieldIssue {
  pointer: string;
  detail: string;
}

/** Ajv errors as field issues with pointers under `location` (/body, /query, ...). */
export function toFieldIssues(errors: readonly ErrorObject[] | null | undefined, location: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    let pointer = `${location}${e.instancePath}`;
    let detail = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      pointer = `${pointer}/${String((e.params as { missingProperty: string }).missingProperty)}`;
      detail = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      pointer = `${pointer}/${String((e.params as { additionalProperty: string }).additionalProperty)}`;
      detail = 'is not an allowed property';
    } else if (e.keyword === 'enum') {
      detail = `must be one of: ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map(String).join(', ')}`;
    } else if (e.keyword === 'const') {
      detail = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    }
    // oneOf/anyOf summaries repeat what their branches said.
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if') continue;
    const key = `${pointer} ${detail}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ pointer, detail });
  }
  return issues;
}
