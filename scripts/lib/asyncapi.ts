// Validation and loading of the AsyncAPI (3.0) webhooks document with @asyncapi/parser.
// The document's relative `$ref`s (./common/schemas.yaml) are resolved from the file's own
// location: the parser is given the absolute file path as `source` (through `fromFile`).
import path from 'node:path';
import { DiagnosticSeverity, Parser, fromFile } from '@asyncapi/parser';
import type { Diagnostic, ParseOutput } from '@asyncapi/parser';

export interface AsyncApiValidation {
  errors: string[];
  warnings: string[];
}

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Keys the parser adds to the document it returns (ids, "spec parsed" markers). */
const PARSER_EXTENSION = /^x-parser-/;

// One parser for the process: its ruleset (the parser's default) is built once.
let sharedParser: Parser | undefined;
function parser(): Parser {
  sharedParser ??= new Parser();
  return sharedParser;
}

async function parseFile(file: string): Promise<{ output: ParseOutput; source: string }> {
  const source = path.resolve(file);
  const output = await fromFile(parser(), source, { encoding: 'utf8' }).parse();
  return { output, source };
}

function formatDiagnostic(d: Diagnostic, mainSource: string): string {
  const pointer = d.path.length === 0 ? '/' : '/' + d.path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  // A diagnostic raised inside a referenced file (common/schemas.yaml) names that file.
  const where = d.source !== undefined && d.source !== null && path.resolve(d.source) !== mainSource ? `${path.relative(path.dirname(mainSource), d.source)}#` : '';
  const rule = d.code === undefined || d.code === '' ? '' : ` (${String(d.code)})`;
  return `${where}${pointer}: ${d.message}${rule}`;
}

/**
 * Parses and validates an AsyncAPI document with the parser's default ruleset.
 * Error diagnostics become `errors`, warnings `warnings`, each as `path: message (rule)`;
 * information and hints are ignored.
 */
export async function validateAsyncApi(file: string): Promise<AsyncApiValidation> {
  const { output, source } = await parseFile(file);
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const d of output.diagnostics) {
    if (d.severity === DiagnosticSeverity.Error) errors.push(formatDiagnostic(d, source));
    else if (d.severity === DiagnosticSeverity.Warning) warnings.push(formatDiagnostic(d, source));
  }
  // The parser answers no document only with an error diagnostic; make sure it is never silent.
  if (output.document === undefined && errors.length === 0) errors.push('/: the parser returned no document');
  return { errors, warnings };
}

function toPlainJson(value: unknown): JsonValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`non-finite number in the AsyncAPI document: ${value}`);
    return value;
  }
  if (Array.isArray(value)) return value.map(toPlainJson);
  if (typeof value === 'object') {
    const out: JsonObject = {};
    for (const [key, v] of Object.entries(value)) {
      if (PARSER_EXTENSION.test(key) || v === undefined) continue;
      out[key] = toPlainJson(v);
    }
    return out;
  }
  throw new Error(`unexpected ${typeof value} in the AsyncAPI document`);
}

/**
 * Returns the fully resolved document (every `$ref`, local and to ./common/, replaced by its
 * target) as plain JSON, for code generation. The parser's own `x-parser-*` extensions are
 * removed. Throws when the document has validation errors.
 */
export async function loadAsyncApi(file: string): Promise<JsonObject> {
  const { output, source } = await parseFile(file);
  const errors = output.diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error).map((d) => formatDiagnostic(d, source));
  if (output.document === undefined || errors.length > 0) {
    throw new Error(`${file}: invalid AsyncAPI document\n  ${errors.join('\n  ') || 'the parser returned no document'}`);
  }
  const json = toPlainJson(output.document.json());
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${file}: the parsed document is not an object`);
  return json;
}
