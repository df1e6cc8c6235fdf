// The HTTP contract at run time: every operation of the four bundled OpenAPI documents
// (read by the shared contract/operations.ts, compiled with the suite's own Ajv) with its documented
// examples, its statuses and a spec pointer for reports. The api target derives its checks
// from this walk, so an operation, a field or a bound added to the spec is checked without
// hand edits.
import { operationsOf, type JsonSchema, type OperationSpec, type ParameterSpec } from '../../../contract/operations.ts';
import { compileOperation, type CompiledOperation } from '../../../contract/validate.ts';
import { API_NAMES, SPEC_FILES, type ApiName } from '../../../generated/vocabulary.ts';
import { PROBLEM_TYPE_BASE, problemTypes } from '../../../generated/problem-types.ts';
import { createSuiteAjv } from '../ajv.ts';
import type { SpecRule } from '../check.ts';
import { loadOpenApi } from '../documents.ts';

export type { ApiName, JsonSchema, OperationSpec, ParameterSpec };

export { SPEC_FILES };

export interface NamedExample {
  name: string;
  value: unknown;
}

export interface ApiOperation {
  api: ApiName;
  spec: OperationSpec;
  compiled: CompiledOperation;
  /** `transactions.openapi.yaml#/paths/~1transactions~1payout/post` */
  pointer: string;
  /** The documented request body examples, in document order. */
  bodyExamples: NamedExample[];
  /** The documented example of each parameter, by `<in>:<name>`. */
  paramExamples: Map<string, unknown>;
  /** Documented 2xx statuses, lowest first. */
  successStatuses: number[];
  /** Whether the operation accepts member tokens (`Authorization: Bearer`). */
  allowsMemberToken: boolean;
  /** Whether the operation declares the `x-tenant-id` header. */
  declaresTenantHeader: boolean;
  /** Whether its success is an event stream (`text/event-stream`): judged by its first message. */
  streams: boolean;
}

export const EVENT_STREAM = 'text/event-stream';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});

const ajvs = { params: createSuiteAjv({ coerce: true }), body: createSuiteAjv({ defaults: true }), response: createSuiteAjv() };

// The documents ship with the suite and do not change while it runs: each is walked, and each
// operation's validators compiled, once per process, however many runs it makes (a partner's
// loop, the suite's own tests). Compiling them again per run was a third of a run's CPU.
const walked = new Map<ApiName, readonly ApiOperation[]>();

/** Every operation of the given documents, in document order: the same objects on every call. */
export function walkOperations(apis: readonly ApiName[] = API_NAMES): ApiOperation[] {
  return apis.flatMap((api) => {
    let ops = walked.get(api);
    if (!ops) walked.set(api, (ops = walkDocument(api)));
    return ops;
  });
}

function walkDocument(api: ApiName): ApiOperation[] {
  const out: ApiOperation[] = [];
  const doc = loadOpenApi(api);
  const paths = obj(doc.paths);
  for (const spec of operationsOf(api, doc)) {
    const item = obj(paths[spec.path]);
    const raw = obj(item[spec.method]);
    const content = obj(obj(obj(raw.requestBody).content)['application/json']);
    const bodyExamples: NamedExample[] = isObj(content.examples)
      ? Object.entries(content.examples).map(([name, ex]) => ({ name, value: obj(ex).value }))
      : 'example' in content
        ? [{ name: 'example', value: content.example }]
        : [];
    const paramExamples = new Map<string, unknown>();
    for (const p of [...asArray(item.parameters), ...asArray(raw.parameters)]) {
      const prm = obj(p);
      const schema = obj(prm.schema);
      const example = 'example' in prm ? prm.example : Array.isArray(schema.examples) ? schema.examples[0] : schema.example;
      if (example !== undefined) paramExamples.set(`${String(prm.in)}:${String(prm.name)}`, example);
    }
    out.push({
      api,
      spec,
      compiled: compileOperation(spec, ajvs),
      pointer: `${SPEC_FILES[api]}#/paths/${escapePointer(spec.path)}/${spec.method}`,
      bodyExamples,
      paramExamples,
      successStatuses: spec.responses
        .map((r) => Number(r.status))
        .filter((s) => s >= 200 && s < 300)
        .sort((a, b) => a - b),
      allowsMemberToken: spec.security.some((s) => 'MemberToken' in s),
      declaresTenantHeader: spec.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'x-tenant-id'),
      streams: spec.responses.some((r) => r.contentType === EVENT_STREAM),
    });
  }
  return out;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** `POST /transactions/payout` */
export function describeOperation(op: ApiOperation): string {
  return `${op.spec.method.toUpperCase()} ${op.spec.path}`;
}

/** Whether `status` is documented for the operation (exactly or by an `NXX` range). */
export function isDocumented(op: ApiOperation, status: number): boolean {
  return op.spec.responses.some((r) => r.status === String(status) || r.status === `${String(status)[0]}XX`);
}

/** The rule behind an operation's documented answers. */
export function operationRule(op: ApiOperation, what: string): SpecRule<never> {
  return { source: `${op.pointer} (${op.spec.operationId}: ${what})` };
}

// ---- problem types ------------------------------------------------------------------------

export type ProblemSlug = keyof typeof problemTypes;

/** The slug of a problem `type` URI, when it is one of spec/common/problem-types.yaml. */
export function problemSlug(type: unknown): ProblemSlug | null {
  if (typeof type !== 'string' || !type.startsWith(PROBLEM_TYPE_BASE)) return null;
  const slug = type.slice(PROBLEM_TYPE_BASE.length);
  return Object.hasOwn(problemTypes, slug) ? (slug as ProblemSlug) : null;
}

export function problemStatus(slug: ProblemSlug): number {
  return problemTypes[slug].status;
}

export const PROBLEM_TYPES_RULE: SpecRule<never> = {
  source: 'common/problem-types.yaml',
  quote: 'The stable problem types of every API. `type` is https://errors.payments.example/<slug>.',
};
