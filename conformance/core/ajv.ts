// The suite's Ajv setup for judging values against the contract documents: JSON Schema
// 2020-12, formats, and the contract's `x-decimal` keyword checked by the suite's own decimal
// reading (./decimal.ts), never the server's validator.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { fitsDecimalRule, type DecimalRule } from './decimal.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const formatsModule = addFormatsModule as unknown as FormatsPlugin | { default: FormatsPlugin };
const addFormats: FormatsPlugin = 'default' in formatsModule ? formatsModule.default : formatsModule;

/** `coerce`: parameters arrive as strings; `defaults`: fill in schema defaults (request bodies only). */
export function createSuiteAjv(opts: { coerce?: boolean; defaults?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: opts.coerce === true, useDefaults: opts.defaults ?? false, validateFormats: true });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: 'x-decimal',
    type: ['number', 'string'],
    schemaType: 'object',
    errors: true,
    validate: function xDecimal(rule: DecimalRule, data: number | string): boolean {
      if (fitsDecimalRule(data, rule)) return true;
      (xDecimal as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        { keyword: 'x-decimal', message: `must have at most ${rule.maxScale} decimal places and ${rule.maxSignificantDigits} significant digits`, params: rule },
      ];
      return false;
    },
  });
  // Documentation-only keywords of the bundled documents.
  for (const k of ['example', 'x-problem-types']) ajv.addKeyword(k);
  return ajv;
}
