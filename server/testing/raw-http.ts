// Requests outside the typed clients, for bodies and headers the types would not allow
// (hostile input, missing credentials), and the one check every problem answer must pass.
import { expect } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../generated/problem-types.ts';

export interface RawCreds {
  apiKey: string;
  apiHash: string;
  tenantId?: string;
}

export interface RawAnswer {
  status: number;
  contentType: string;
  body: Record<string, unknown> & { type?: string; errors?: Array<{ pointer: string; detail: string }> };
}

/** Only the key and its hash of some credentials (no x-tenant-id header). */
export const keyOf = (c: { apiKey: string; apiHash: string }): RawCreds => ({ apiKey: c.apiKey, apiHash: c.apiHash });

export async function sendRaw(
  baseUrl: string,
  creds: Partial<RawCreds> | null,
  method: string,
  path: string,
  init: { json?: unknown; text?: string; contentType?: string; headers?: Record<string, string> } = {},
): Promise<RawAnswer> {
  const headers: Record<string, string> = { ...init.headers };
  if (creds?.apiKey !== undefined) headers['x-api-key'] = creds.apiKey;
  if (creds?.apiHash !== undefined) headers['x-api-hash'] = creds.apiHash;
  if (creds?.tenantId !== undefined) headers['x-tenant-id'] = creds.tenantId;
  let body: string | undefined;
  if (init.text !== undefined) body = init.text;
  else if (init.json !== undefined) body = JSON.stringify(init.json);
  if (body !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: text ? (JSON.parse(text) as RawAnswer['body']) : {} };
}

/** A problem+json answer with the given status and problem type. */
export function expectProblem(a: RawAnswer, status: number, slug: string): void {
  expect({ status: a.status, type: a.body.type }).toEqual({ status, type: `${PROBLEM_TYPE_BASE}${slug}` });
  expect(a.contentType).toMatch(/^application\/problem\+json/);
  expect(a.body.status).toBe(status);
  expect(typeof a.body.title).toBe('string');
  expect(typeof a.body.detail).toBe('string');
}
