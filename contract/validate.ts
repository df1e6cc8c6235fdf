// An operation's request and response validators, compiled from its schemas with the Ajv
// instances the caller brings: the server brings its own (its x-decimal is the domain's money
// code), the conformance suite its own, so neither judges amounts with the other's code.
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { JsonSchema, OperationSpec, ParameterSpec } from './operations.ts';

/** The three Ajv setups an operation is compiled with. */
export interface OperationAjvs {
  /** Coerces strings to the schema's scalar types (path, query and header parameters). */
  params: Pick<Ajv, 'compile'>;
  /** Request bodies (may fill in defaults). */
  body: Pick<Ajv, 'compile'>;
  /** Responses: validated as sent, never altered. */
  response: Pick<Ajv, 'compile'>;
}

export interface FieldIssue {
  pointer: string;
  detail: string;
}

export interface RequestInput {
  path: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** Parsed JSON body, or undefined when there was none. */
  body: unknown;
}

export interface ValidatedRequest {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
}

export interface CompiledOperation {
  spec: OperationSpec;
  /** The header parameters the operation declares, lowercase: the only headers validateRequest reads. */
  headerNames: readonly string[];
  /** Validates (and coerces parameters of) a request; returns the issues, empty when valid. */
  validateRequest(input: RequestInput): { value: ValidatedRequest; issues: FieldIssue[] };
  /** Validates a response against the documented status and schema; returns the problems. */
  validateResponse(status: number, contentType: string | null, body: unknown): string[];
}

function paramsSchema(params: ParameterSpec[], where: ParameterSpec['in']): JsonSchema {
  const mine = params.filter((p) => p.in === where);
  return {
    type: 'object',
    properties: Object.fromEntries(mine.map((p) => [where === 'header' ? p.name.toLowerCase() : p.name, p.schema])),
    required: mine.filter((p) => p.required).map((p) => (where === 'header' ? p.name.toLowerCase() : p.name)),
  };
}

/**
 * Compiles lazily: each validator on its first use. An app serves some 40 operations with
 * about 150 schemas; compiling them all took about a second of CPU at every start (and every
 * in-process test server), while a request pays only for its own operation, once.
 */
export function compileOperation(spec: OperationSpec, ajvs: OperationAjvs): CompiledOperation {
  const validators: Array<[keyof RequestInput, () => ValidateFunction]> = (['path', 'query', 'header'] as const).map((where) => [
    where === 'header' ? 'headers' : where,
    once(() => ajvs.params.compile(paramsSchema(spec.parameters, where))),
  ]);
  const requestBody = spec.requestBody;
  const bodyValidator = requestBody ? once(() => ajvs.body.compile(requestBody.schema)) : null;
  const responseValidators = new Map<string, (() => ValidateFunction) | null>(
    spec.responses.map((r) => {
      const schema = r.schema;
      return [r.status, schema ? once(() => ajvs.response.compile(schema)) : null];
    }),
  );

  // Everything a request's validation needs is derived here, once per operation.
  const declaredQuery = new Set(spec.parameters.filter((p) => p.in === 'query').map((p) => p.name));
  const headerNames = spec.parameters.filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());
  const declaredHeaders = new Set(headerNames);
  const pick = (from: Record<string, string>, keep: ReadonlySet<string>, lower: boolean): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    if (keep.size === 0) return out;
    for (const k in from) if (keep.has(lower ? k.toLowerCase() : k)) out[k] = from[k];
    return out;
  };

  return {
    spec,
    headerNames,
    validateRequest(input) {
      const issues: FieldIssue[] = [];
      const value: ValidatedRequest = { path: { ...input.path }, query: pick(input.query, declaredQuery, false), headers: pick(input.headers, declaredHeaders, true), body: input.body };
      for (const [where, validatorOf] of validators) {
        const validate = validatorOf();
        const target = value[where as 'path' | 'query' | 'headers'];
        if (!validate(target)) issues.push(...toFieldIssues(validate.errors, `/${where === 'headers' ? 'header' : where}`));
      }
      if (bodyValidator) {
        if (input.body === undefined) {
          if (spec.requestBody?.required) issues.push({ pointer: '/body', detail: 'a JSON request body is required' });
        } else {
          const validate = bodyValidator();
          if (!validate(input.body)) issues.push(...toFieldIssues(validate.errors, '/body'));
        }
      } else if (input.body !== undefined) {
        issues.push({ pointer: '/body', detail: 'this operation takes no request body' });
      }
      return { value, issues };
    },
    validateResponse(status, contentType, body) {
      const key = responseValidators.has(String(status)) ? String(status) : responseValidators.has(`${String(status)[0]}XX`) ? `${String(status)[0]}XX` : null;
      if (key === null) return [`status ${status} is not documented for ${spec.operationId}`];
      const documented = spec.responses.find((r) => r.status === key);
      const validate = responseValidators.get(key)?.();
      const problems: string[] = [];
      const baseType = contentType?.split(';')[0]?.trim() ?? null;
      if (documented?.contentType && baseType !== documented.contentType) {
        problems.push(`content type ${baseType ?? '(none)'} is not the documented ${documented.contentType}`);
      }
      if (validate && !validate(body)) {
        problems.push(...toFieldIssues(validate.errors, '/body').map((i) => `${i.pointer} ${i.detail}`));
      }
      return problems;
    },
  };
}

/** The value make() returns, computed on the first call. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | null = null;
  return () => (made ??= { value: make() }).value;
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
