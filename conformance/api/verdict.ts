// Judging one answer of the implementation under test: a documented success with a body valid
// against its response schema, or the expected problem (a documented 4xx, application/
// problem+json, valid against Problem, a type of common/problem-types.yaml whose status is
// the answer's), or an operation that is not served at all.
import type { CheckOutcome, Exchange, SpecRule } from '../core/check.ts';
import { fail, pass } from '../core/outcome.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { describeStatus } from '../core/http.ts';
import type { ApiResponse } from '../core/openapi/client.ts';
import { EVENT_STREAM, PROBLEM_TYPES_RULE, isDocumented, operationRule, problemSlug, problemStatus } from '../core/openapi/contract.ts';
import type { ApiOperation, ProblemSlug } from '../core/openapi/contract.ts';
import { NOT_IMPLEMENTED_NOTE, NO_5XX_RULE, PROBLEM_RULE } from './rules.ts';

/**
 * Why the answer shows that the operation is not served (404 route-not-found, 405, 501, or a
 * 404 that is none of the contract's problems, as a framework's default page), or null.
 */
export function routeMissing(res: ApiResponse): string | null {
  const status = res.status;
  if (status === 405 || status === 501) return `answered ${status}`;
  if (status !== 404) return null;
  const slug = res.isJson ? problemSlug((res.json as { type?: unknown } | null)?.type) : null;
  if (slug === 'route-not-found') return 'answered 404 route-not-found';
  if (slug === null) return 'answered 404 without a problem of the contract';
  return null;
}

export function notImplemented(op: ApiOperation, res: ApiResponse, why: string): CheckOutcome {
  return { status: 'not_implemented', reason: `${op.spec.method.toUpperCase()} ${op.spec.path} is not served (${why}): ${NOT_IMPLEMENTED_NOTE}` };
}

/** The documented success of `op`, with a body valid against its response schema. */
export function judgeSuccess(op: ApiOperation, res: ApiResponse, evidence: Exchange[] = [res.exchange]): CheckOutcome {
  const rule = operationRule(op, `documented ${op.successStatuses.join('/')} response`);
  if (res.status === null) return fail(`no answer: ${describeStatus(res.exchange.response)}`, rule, evidence);
  const missing = routeMissing(res);
  if (missing) return notImplemented(op, res, missing);
  if (!op.successStatuses.includes(res.status)) {
    const documented = isDocumented(op, res.status) ? '' : ' (not a documented status of this operation)';
    return fail(
      `a valid request was answered ${describeAnswer(res)}${documented}; the contract answers ${op.successStatuses.join(' or ')}`,
      op.successStatuses.includes(201) || op.successStatuses.includes(200) ? { ...rule, quote: 'Creations answer 201, reads and state changes 200.' } : rule,
      evidence,
    );
  }
  const problems = bodyProblems(op, res);
  if (problems.length > 0) {
    return fail(`the ${res.status} answer breaks its response schema: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}`, rule, evidence);
  }
  return pass();
}

function bodyProblems(op: ApiOperation, res: ApiResponse): string[] {
  const documented = op.spec.responses.find((r) => r.status === String(res.status));
  if (documented?.contentType === EVENT_STREAM) return eventStreamProblems(res);
  if (documented?.schema && !res.isJson) {
    const ct = res.contentType ?? '(none)';
    return [`the body is not JSON (content type ${ct})`];
  }
  return op.compiled.validateResponse(res.status ?? 0, res.contentType, res.json);
}

/** The start of an event stream: its content type, and a first message of comment or field lines. */
function eventStreamProblems(res: ApiResponse): string[] {
  const problems: string[] = [];
  if (res.contentType?.split(';')[0]?.trim() !== EVENT_STREAM) problems.push(`the content type is ${res.contentType ?? '(none)'}, not ${EVENT_STREAM}`);
  const first = res.exchange.response.body.split('\n\n')[0] ?? '';
  if (!/^(?::[^\n]*|[A-Za-z]+(?::[^\n]*)?)(?:\n(?::[^\n]*|[A-Za-z]+(?::[^\n]*)?))*$/.test(first)) problems.push('the stream does not start with a message of Server-Sent Events lines');
  return problems;
}

export interface ExpectedProblem {
  status: number;
  slug: ProblemSlug;
  /** For validation-failed: a pointer that `errors` must name (it or a pointer below it). */
  pointer?: string;
}

/**
 * A refusal: the expected status and problem type, and in any case a documented 4xx with an
 * application/problem+json body valid against Problem and a type of common/problem-types.yaml.
 */
export function judgeProblem(op: ApiOperation, res: ApiResponse, expected: ExpectedProblem, rule: SpecRule, evidence: Exchange[] = [res.exchange]): CheckOutcome {
  if (res.status === null) return fail(`no answer: ${describeStatus(res.exchange.response)}`, rule, evidence);
  if (res.status >= 200 && res.status < 300) {
    return fail(`the request was accepted (${res.status}); the contract answers ${expected.status} ${expected.slug}`, rule, evidence);
  }
  if (res.status >= 500) {
    return fail(`answered ${describeAnswer(res)}: a request the client got wrong must be a documented 4xx, never a 5xx (expected ${expected.status} ${expected.slug})`, NO_5XX_RULE, evidence);
  }
  const missing = routeMissing(res);
  if (missing) return notImplemented(op, res, missing);
  if (!isDocumented(op, res.status)) {
    return fail(`answered ${describeAnswer(res)}, a status this operation does not document (expected ${expected.status} ${expected.slug})`, operationRule(op, 'documented responses'), evidence);
  }
  const problems = bodyProblems(op, res);
  if (problems.length > 0) return fail(`the ${res.status} answer is not a valid problem: ${problems.slice(0, 5).join('; ')}`, PROBLEM_RULE, evidence);
  const body = res.json as { type?: unknown; status?: unknown; errors?: unknown };
  const slug = problemSlug(body.type);
  if (slug === null) return fail(`the problem type ${JSON.stringify(body.type)} is not one of common/problem-types.yaml`, PROBLEM_TYPES_RULE, evidence);
  if (body.status !== res.status) return fail(`the problem's status ${JSON.stringify(body.status)} is not the HTTP status ${res.status}`, PROBLEM_RULE, evidence);
  if (problemStatus(slug) !== res.status) {
    return fail(`the problem type ${slug} has status ${problemStatus(slug)} in common/problem-types.yaml, not ${res.status}`, PROBLEM_TYPES_RULE, evidence);
  }
  if (res.status !== expected.status || slug !== expected.slug) {
    return fail(`answered ${describeAnswer(res)}; the contract answers ${expected.status} ${expected.slug}`, rule, evidence);
  }
  if (expected.pointer !== undefined) {
    const pointers = Array.isArray(body.errors) ? body.errors.map((e) => (e as { pointer?: unknown }).pointer).filter((p): p is string => typeof p === 'string') : [];
    const wanted = expected.pointer;
    if (!pointers.some((p) => p === wanted || p.startsWith(`${wanted}/`))) {
      return fail(
        `the validation-failed problem does not name ${wanted} in errors (it names ${pointers.length > 0 ? pointers.join(', ') : 'nothing'})`,
        { source: 'common/problem-types.yaml#/validation-failed', quote: 'A field is missing or invalid; `errors` lists each one with its JSON pointer.' },
        evidence,
      );
    }
  }
  return pass();
}
