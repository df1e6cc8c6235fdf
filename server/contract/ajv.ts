// The server's Ajv setup for checking values against the contract (request and response
// validation, the fuzzer): JSON Schema 2020-12, formats, and the contract's own `x-decimal`
// keyword for exact amounts, judged by the domain's money code. The conformance suite has its
// own (conformance/core/ajv.ts), so a bug here cannot hide from it.
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

export { toFieldIssues, type FieldIssue } from '../../contract/validate.ts';
