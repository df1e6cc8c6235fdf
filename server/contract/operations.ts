// The contract at run time for the server: the operations of the bundled, dereferenced OpenAPI
// documents in generated/openapi/ (read by contract/operations.ts, shared with the conformance
// suite), with validators compiled by the server's own Ajv setup (server/contract/ajv.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApiName } from '../../generated/vocabulary.ts';
import { operationsOf, type OperationSpec } from '../../contract/operations.ts';
import { compileOperation as compileWith, type CompiledOperation } from '../../contract/validate.ts';
import { createAjv } from './ajv.ts';

export { API_NAMES, type ApiName } from '../../generated/vocabulary.ts';
export type { HttpMethod, JsonSchema, OperationSpec, ParameterSpec, ResponseSpec } from '../../contract/operations.ts';
export type { CompiledOperation, RequestInput, ValidatedRequest } from '../../contract/validate.ts';

const GENERATED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'generated', 'openapi');

export function loadDocument(api: ApiName): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(GENERATED, `${api}.json`), 'utf8')) as Record<string, unknown>;
}

export function loadOperations(api: ApiName): OperationSpec[] {
  return operationsOf(api, loadDocument(api));
}

const ajvs = { params: createAjv({ coerce: true }), body: createAjv(), response: createAjv({ defaults: false }) };

export function compileOperation(spec: OperationSpec): CompiledOperation {
  return compileWith(spec, ajvs);
}
