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

// generated/ does not change under a running process (`npm run dev` restarts the server), so the
// operations are read once and each operation's validators compiled once per process: every app
// built in it (test servers, the stateful mock, the mutants) shares them. Compiling them again
// for each app was a third of a conformance run's CPU.
const operations = new Map<ApiName, readonly OperationSpec[]>();
const compiled = new WeakMap<OperationSpec, CompiledOperation>();

/** The operations of `api`, in document order: the same objects on every call. */
export function loadOperations(api: ApiName): readonly OperationSpec[] {
  let ops = operations.get(api);
  if (!ops) operations.set(api, (ops = operationsOf(api, loadDocument(api))));
  return ops;
}

const ajvs = { params: createAjv({ coerce: true }), body: createAjv(), response: createAjv({ defaults: false }) };

/** The validators of `spec`, compiled on first use, the same for every caller of the process. */
export function compileOperation(spec: OperationSpec): CompiledOperation {
  let op = compiled.get(spec);
  if (!op) compiled.set(spec, (op = compileWith(spec, ajvs)));
  return op;
}
