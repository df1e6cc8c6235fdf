// Before `listen` or `trigger` does anything: the service answers, the key is accepted, and it
// is a test key. GET /sandbox/wallet answers any test key and refuses a live one (403
// live-key-not-allowed), so the service itself says which environment the key belongs to.
import { createSandboxClient } from '../api.ts';
import type { Connection } from './args.ts';
import { describe } from './stream-reader.ts';

/** A failure the user must fix; its message is printed as it is. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

export async function checkTestKey(connection: Connection, fetchImpl?: typeof fetch): Promise<void> {
  const sandbox = createSandboxClient({ baseUrl: connection.baseUrl, apiKey: connection.apiKey, apiHash: connection.apiSecret, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  const r = await sandbox.GET('/sandbox/wallet').catch((err: unknown) => {
    throw new CliError(`cannot reach the service at ${connection.baseUrl} (${describe(err)})`);
  });
  if (r.data) return;
  throw refusal(r.response.status, r.error);
}

/** The message for a refused request, by its problem type. */
export function refusal(status: number, problem: { type?: string; detail?: string } | undefined): CliError {
  const slug = problem?.type?.split('/').pop();
  if (status === 401) return new CliError('the API key or its secret was refused (401 unauthenticated): check --api-key and --api-secret');
  if (slug === 'permission-denied') return new CliError(`${problem?.detail ?? 'This API key lacks a permission.'} listen needs orders_read, trigger orders_write (403 permission-denied)`);
  if (slug === 'live-key-not-allowed') return new CliError('this key belongs to the live environment: listen and trigger take test keys only');
  return new CliError(`the service answered ${status}${slug ? ` ${slug}` : ''}${problem?.detail ? `: ${problem.detail}` : ''}`);
}
