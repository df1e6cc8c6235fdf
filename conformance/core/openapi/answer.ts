// How an answer of the implementation reads in a message: status, problem type and detail.
import { describeStatus } from '../http.ts';
import type { ApiResponse } from './client.ts';
import { problemSlug } from './contract.ts';

/** A one-line summary of a problem answer, for messages: `409 duplicate-third-party-id ("...")`. */
export function describeAnswer(res: ApiResponse): string {
  if (res.status === null) return describeStatus(res.exchange.response);
  const body = res.json as { type?: unknown; detail?: unknown } | undefined;
  const isProblem = (res.contentType ?? '').includes('problem+json');
  if (res.isJson && body && typeof body === 'object' && (isProblem || problemSlug(body.type) !== null)) {
    const slug = problemSlug(body.type);
    const type = slug ?? (typeof body.type === 'string' ? body.type : undefined);
    const detail = typeof body.detail === 'string' ? ` ("${body.detail.slice(0, 160)}")` : '';
    if (type) return `${res.status} ${type}${detail}`;
  }
  return String(res.status);
}
