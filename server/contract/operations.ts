// The contract at run time: the operations of the bundled, dereferenced OpenAPI documents in
// generated/openapi/, with validators compiled from their schemas. The server routes and
// validates from this, and the conformance suite derives its checks from it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import type { ApiName } from '../../generated/vocabulary.ts';
import { createAjv, toFieldIssues, type FieldIssue } from './ajv.ts';

export { API_NAMES, type ApiName } from '../../generated/vocabulary.ts';
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
const METHODS: readonly HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

export type JsonSchema = Record<string, unknown>;

export interface ParameterSpec {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface ResponseSpec {
  status: string;
  contentType: string | null;
  schema: JsonSchema | null;
}

export interface OperationSpec {
  api: ApiName;
  operationId: string;
  method: HttpMethod;
  /** OpenAPI path template, e.g. /v2/orders/{orderId}. */
  path: string;
  /** The same path in Hono's syntax, e.g. /v2/orders/:orderId. */
  honoPath: string;
  summary: string;
  /** `x-permission`: the API key permission the operation needs, if any. */
  permission: string | null;
  /** `x-member-roles`: the member roles allowed (management operations), or null. */
  memberRoles: string[] | null;
  /** Security requirements (alternatives), by scheme name. */
  security: Array<Record<string, string[]>>;
  parameters: ParameterSpec[];
  requestBody: { required: boolean; schema: JsonSchema } | null;
  responses: ResponseSpec[];
}

const GENERATED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'generated', 'openapi');

export function loadDocument(api: ApiName): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(GENERATED, `${api}.json`), 'utf8')) as Record<string, unknown>;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? (v as Obj) : {});

export function loadOperations(api: ApiName): OperationSpec[] {
  const doc = loadDocument(api);
  const rootSecurity = (doc.security as OperationSpec['security'] | undefined) ?? [];
  const ops: OperationSpec[] = [];
  for (const [p, item] of Object.entries(obj(doc.paths))) {
    const pathItem = obj(item);
    const shared = (pathItem.parameters as unknown[] | undefined) ?? [];
    for (const method of METHODS) {
      const op = pathItem[method] as Obj | undefined;
      if (!op) continue;
      const parameters = [...shared, ...((op.parameters as unknown[] | undefined) ?? [])].map((raw) => {
        const prm = obj(raw);
        return {
          name: String(prm.name),
          in: prm.in as ParameterSpec['in'],
          required: prm.required === true,
          schema: obj(prm.schema),
        };
      });
      const body = obj(op.requestBody);
      const bodySchema = obj(obj(body.content)['application/json']).schema;
      const responses = Object.entries(obj(op.responses)).map(([status, r]) => {
        const content = obj(obj(r).content);
        const contentType = Object.keys(content)[0] ?? null;
        return { status, contentType, schema: contentType ? (obj(content[contentType]).schema as JsonSchema) ?? null : null };
      });
      ops.push({
        api,
        operationId: String(op.operationId),
        method,
        path: p,
        honoPath: p.replace(/\{([^}]+)\}/g, ':$1'),
        summary: String(op.summary ?? ''),
        permission: typeof op['x-permission'] === 'string' ? (op['x-permission'] as string) : null,
        memberRoles: Array.isArray(op['x-member-roles']) ? (op['x-member-roles'] as string[]) : null,
        security: (op.security as OperationSpec['security'] | undefined) ?? rootSecurity,
        parameters,
        requestBody: bodySchema ? { required: body.required === true, schema: bodySchema as JsonSchema } : null,
        responses,
      });
    }
  }
  return ops;
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

const paramAjv = createAjv({ coerce: true });
const bodyAjv = createAjv();
const responseAjv = createAjv({ defaults: false });

function paramsSchema(params: ParameterSpec[], where: ParameterSpec['in']): JsonSchema {
  const mine = params.filter((p) => p.in === where);
  return {
    type: 'object',
    properties: Object.fromEntries(mine.map((p) => [where === 'header' ? p.name.toLowerCase() : p.name, p.schema])),
    required: mine.filter((p) => p.required).map((p) => (where === 'header' ? p.name.toLowerCase() : p.name)),
  };
}

export function compileOperation(spec: OperationSpec): CompiledOperation {
  const validators: Array<[keyof RequestInput, ValidateFunction]> = (['path', 'query', 'header'] as const).map((where) => [
    where === 'header' ? 'headers' : where,
    paramAjv.compile(paramsSchema(spec.parameters, where)),
  ]);
  const bodyValidator = spec.requestBody ? bodyAjv.compile(spec.requestBody.schema) : null;
  const responseValidators = new Map<string, ValidateFunction | null>(
    spec.responses.map((r) => [r.status, r.schema ? responseAjv.compile(r.schema) : null]),
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
      for (const [where, validate] of validators) {
        const target = value[where as 'path' | 'query' | 'headers'];
        if (!validate(target)) issues.push(...toFieldIssues(validate.errors, `/${where === 'headers' ? 'header' : where}`));
      }
      if (bodyValidator) {
        if (input.body === undefined) {
          if (spec.requestBody?.required) issues.push({ pointer: '/body', detail: 'a JSON request body is required' });
        } else if (!bodyValidator(input.body)) {
          issues.push(...toFieldIssues(bodyValidator.errors, '/body'));
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
      const validate = responseValidators.get(key);
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
