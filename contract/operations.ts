// The operations of a bundled, dereferenced OpenAPI document (generated/openapi/<api>.json),
// read the same way by the reference server (routing, validation) and the conformance suite
// (its checks). Pure: the caller reads the document from wherever it ships.
import type { ApiName } from '../generated/vocabulary.ts';

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
  /** The documented response headers' schemas, by lowercase name (`retry-after`). */
  headers: Record<string, JsonSchema>;
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
  /** `x-required-one-of`: parameters of which at least one must be given (non-empty), else 400 `problem`; or null. */
  requiredOneOf: { parameters: string[]; problem: string } | null;
  /** Security requirements (alternatives), by scheme name. */
  security: Array<Record<string, string[]>>;
  parameters: ParameterSpec[];
  requestBody: { required: boolean; schema: JsonSchema } | null;
  responses: ResponseSpec[];
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? (v as Obj) : {});

/** Every operation of the document `doc` of API `api`, in document order. */
export function operationsOf(api: ApiName, doc: Record<string, unknown>): OperationSpec[] {
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
        const headers = Object.fromEntries(Object.entries(obj(obj(r).headers)).map(([name, h]) => [name.toLowerCase(), (obj(h).schema as JsonSchema) ?? {}]));
        return { status, contentType, schema: contentType ? (obj(content[contentType]).schema as JsonSchema) ?? null : null, headers };
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
        requiredOneOf: requiredOneOf(op['x-required-one-of']),
        security: (op.security as OperationSpec['security'] | undefined) ?? rootSecurity,
        parameters,
        requestBody: bodySchema ? { required: body.required === true, schema: bodySchema as JsonSchema } : null,
        responses,
      });
    }
  }
  return ops;
}

function requiredOneOf(raw: unknown): OperationSpec['requiredOneOf'] {
  const rule = obj(raw);
  if (!Array.isArray(rule.parameters) || typeof rule.problem !== 'string') return null;
  return { parameters: rule.parameters.map(String), problem: rule.problem };
}
