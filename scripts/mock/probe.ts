// The contract probe of the mock: every operation of the four documents, asked for its default
// answer, for each documented status (`Prefer: code=`), for each named example
// (`Prefer: example=`) and with each generated invalid request, under each of the Accept values
// clients send. A divergence is an answer whose status the operation does not document, a status
// other than the one asked for, a body its schema refuses, or an answer that differs from the one
// the same request gets without an Accept header. It also sends each body-less POST a `{}` body
// (the server ignores it) and breaks each `x-required-one-of` rule (the contract's problem type).
import { invalidCases } from '../../conformance/api/invalid.ts';
import { walkOperations, type ApiOperation } from '../../conformance/core/openapi/contract.ts';
import { exampleRequest, type RequestParts } from '../../conformance/core/openapi/requests.ts';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import { compileOperation, loadDocument } from '../../server/contract/operations.ts';

export const ACCEPTS: ReadonlyArray<string | null> = [null, '*/*', 'application/json', 'application/problem+json', 'text/html'];

const CREDENTIALS = { 'x-api-key': 'pk_test_probe', 'x-api-hash': 'sk_test_probe', authorization: 'Bearer mt_probe' };
const SEED = 20261127;

export interface ProbeCase {
  op: ApiOperation;
  /** What the case asks: `default`, `code=404`, `example=paid`, `invalid body.amount.below-minimum`. */
  name: string;
  parts: RequestParts;
  prefer: string | null;
  /** The status the answer must have; null: any documented success. */
  expected: number | null;
  /** The problem type (its slug) the answer must have, when the case names one. */
  problem?: string;
}

type Obj = Record<string, unknown>;

/** Every case of every operation. */
export function probeCases(): ProbeCase[] {
  return walkOperations().flatMap((op) => {
    const parts = exampleRequest(op, { seed: SEED, tenantId: 'ten_probe' });
    const documented = documentedExamples(op);
    return [
      { op, name: 'default', parts, prefer: null, expected: null },
      ...[...documented.keys()].map((status) => ({ op, name: `code=${status}`, parts, prefer: `code=${status}`, expected: Number(status) })),
      ...[...documented].flatMap(([status, names]) => names.map((n) => ({ op, name: `code=${status}, example=${n}`, parts, prefer: `code=${status}, example=${n}`, expected: Number(status) }))),
      ...invalidCases(op).map((c) => ({ op, name: `invalid ${c.key}`, parts: c.apply(parts, SEED), prefer: null, expected: 400 })),
      ...emptyBodyCases(op, parts),
      ...requiredOneOfCases(op, parts),
    ];
  });
}

/** A POST without a request body, sent `{}` anyway (`axios.post(url, {})`): the server ignores the body. */
function emptyBodyCases(op: ApiOperation, parts: RequestParts): ProbeCase[] {
  if (op.spec.method !== 'post' || op.spec.requestBody) return [];
  return [{ op, name: 'body-less, sent {}', parts: { ...parts, body: {} }, prefer: null, expected: null }];
}

/** The operation's `x-required-one-of` broken: none of its parameters given. */
function requiredOneOfCases(op: ApiOperation, parts: RequestParts): ProbeCase[] {
  const rule = op.spec.requiredOneOf;
  if (!rule) return [];
  const query = Object.fromEntries(Object.entries(parts.query).filter(([name]) => !rule.parameters.includes(name)));
  return [{ op, name: `without ${rule.parameters.join(', ')}`, parts: { ...parts, query }, prefer: null, expected: 400, problem: rule.problem }];
}

/** The operation's statuses with their named examples, from the bundled document. */
function documentedExamples(op: ApiOperation): Map<string, string[]> {
  const responses = ((((loadDocument(op.api).paths as Obj)[op.spec.path] as Obj)[op.spec.method] as Obj).responses ?? {}) as Record<string, Obj>;
  return new Map(Object.entries(responses).map(([status, r]) => [status, Object.values((r.content ?? {}) as Record<string, Obj>).flatMap((m) => Object.keys((m.examples ?? {}) as Obj))]));
}

export interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

export async function ask(base: string, c: ProbeCase, accept: string | null): Promise<Answer> {
  const url = new URL(base + c.op.spec.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(c.parts.path[name] ?? 'x')));
  for (const [k, v] of Object.entries(c.parts.query)) url.searchParams.set(k, v);
  const headers: Record<string, string> = { ...CREDENTIALS, ...c.parts.headers };
  if (accept !== null) headers.accept = accept;
  if (c.prefer !== null) headers.prefer = c.prefer;
  if (c.parts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method: c.op.spec.method.toUpperCase(), headers, ...(c.parts.body === undefined ? {} : { body: JSON.stringify(c.parts.body) }) });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

/** What is wrong with `answer` to `c` (under `accept`), given the answer without Accept; empty when nothing. */
export function divergences(c: ProbeCase, accept: string | null, answer: Answer, withoutAccept: Answer): string[] {
  const where = `${c.op.spec.operationId} ${c.name} (Accept: ${accept ?? 'none'})`;
  const out: string[] = [];
  const documented = c.op.spec.responses.map((r) => Number(r.status));
  if (!documented.includes(answer.status)) out.push(`${where}: status ${answer.status} is not documented (${documented.join(', ')})`);
  if (c.expected !== null && answer.status !== c.expected) out.push(`${where}: status ${answer.status}, asked for ${c.expected}`);
  if (c.expected === null && (answer.status < 200 || answer.status > 299)) out.push(`${where}: status ${answer.status}, not a success`);
  const type = (bodyOf(answer) as { type?: unknown } | null)?.type;
  if (c.problem !== undefined && type !== `${PROBLEM_TYPE_BASE}${c.problem}`) out.push(`${where}: problem type ${String(type)}, not ${c.problem}`);
  // The server's validators of the operation (compiled once per process by compileOperation).
  const problems = compileOperation(c.op.spec).validateResponse(answer.status, answer.contentType, bodyOf(answer));
  if (problems.length > 0) out.push(`${where}: body refused by its schema: ${problems.join('; ')}`);
  if (answer.status !== withoutAccept.status || withoutRequestId(answer.text) !== withoutRequestId(withoutAccept.text)) out.push(`${where}: differs from the answer without Accept (${withoutAccept.status})`);
  return out;
}

function bodyOf(answer: Answer): unknown {
  if (!(answer.contentType ?? '').includes('json')) return answer.text;
  try {
    return JSON.parse(answer.text) as unknown;
  } catch {
    return answer.text;
  }
}

/** Each answer of the front carries its own request id. */
function withoutRequestId(text: string): string {
  return text.replace(/"requestId":"[^"]*"/g, '').replace(/req_[0-9A-Z]{26}/g, '');
}
