// problem+json bodies (RFC 9457) from the one error type.
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';
import type { components } from '../../generated/types/transactions.ts';
import { AppError } from '../domain/errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The contract's `Problem` schema (spec/common/schemas.yaml). */
export type ProblemBody = components['schemas']['Problem'];

export function problemBody(err: AppError, instance: string, requestId: string): ProblemBody {
  const { retryAfter: _retryAfter, ...extras } = err.extras;
  return {
    type: `${PROBLEM_TYPE_BASE}${err.slug}`,
    title: err.title,
    status: err.status,
    detail: err.detail,
    instance,
    requestId,
    ...extras,
  };
}

export function problemResponse(err: AppError, instance: string, requestId: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(problemBody(err, instance, requestId)), {
    status: err.status,
    headers: {
      'content-type': PROBLEM_CONTENT_TYPE,
      'x-request-id': requestId,
      ...(err.extras.retryAfter !== undefined ? { 'retry-after': String(err.extras.retryAfter) } : {}),
      ...headers,
    },
  });
}
