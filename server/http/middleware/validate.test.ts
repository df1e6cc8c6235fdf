import { describe, expect, it } from 'vitest';
import { compileOperation, loadOperations } from '../../contract/operations.ts';
import { jsonBody } from './body.ts';
import { validateRequest } from './validate.ts';
import { appWith, problemSlug } from './testing.ts';

// A real operation of the contract: POST /transactions/payout.
const spec = loadOperations('transactions').find((o) => o.method === 'post' && o.path === '/transactions/payout');
if (!spec) throw new Error('the payout operation is missing from the contract');
const op = compileOperation(spec);

describe('validateRequest', () => {
  const app = appWith(jsonBody(), validateRequest(op));
  const post = (body: unknown) => {
    const text = JSON.stringify(body);
    return app.request('/op/1', { method: 'POST', body: text, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } });
  };

  it('sets the validated request', async () => {
    const res = await post({ thirdPartyId: 'tp-1', userId: 'user-1', amount: 25.5 });
    expect(res.status).toBe(200);
    const { request } = (await res.json()) as { request: { body: unknown } };
    expect(request.body).toEqual({ thirdPartyId: 'tp-1', userId: 'user-1', amount: 25.5 });
  });

  it('answers 400 validation-failed listing each issue by pointer', async () => {
    const res = await post({ thirdPartyId: 'tp-1', amount: -1 });
    expect(res.status).toBe(400);
    const body = (await res.clone().json()) as { errors: Array<{ pointer: string }> };
    expect(await problemSlug(res)).toBe('validation-failed');
    expect(body.errors.map((e) => e.pointer)).toEqual(expect.arrayContaining(['/body/userId', '/body/amount']));
  });

  it('refuses NUL characters anywhere', async () => {
    const res = await post({ thirdPartyId: 'tp\u0000', userId: 'user-1', amount: 1 });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: Array<{ pointer: string }> };
    expect(body.errors.map((e) => e.pointer)).toContain('/body/thirdPartyId');
  });
});
