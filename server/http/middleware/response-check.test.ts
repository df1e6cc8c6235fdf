import { Hono, type Context } from 'hono';
import { describe, expect, it } from 'vitest';
import { compileOperation, loadOperations } from '../../contract/operations.ts';
import { captureLogger } from '../../delivery/testing.ts';
import { AppError } from '../../domain/errors.ts';
import type { AppEnv } from '../app-env.ts';
import { problemErrorHandler } from '../errors.ts';
import { checkResponse } from './response-check.ts';
import { problemSlug } from './testing.ts';

// A real operation of the contract: POST /transactions/payout, whose 201 answer is documented.
const spec = loadOperations('transactions').find((o) => o.method === 'post' && o.path === '/transactions/payout');
if (!spec) throw new Error('the payout operation is missing from the contract');
const op = compileOperation(spec);

function appAnswering(answer: (c: Context<AppEnv>) => Response) {
  const { log, lines } = captureLogger('error');
  const app = new Hono<AppEnv>();
  app.post('/op', checkResponse(op, log), (c) => answer(c));
  app.onError(problemErrorHandler(log));
  return { app, lines };
}

describe('checkResponse', () => {
  it('passes an answer the contract documents', async () => {
    const answer = { transactionId: 'txn_01JD4W9Q6S2V5K8X3M7N0PBRT4', thirdPartyId: 'merchant-payout-2026-000183' };
    const { app, lines } = appAnswering((c) => c.json(answer, 201));
    const res = await app.request('/op', { method: 'POST' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual(answer);
    expect(lines).toEqual([]);
  });

  it('answers 500 internal and logs when the handler breaks the contract', async () => {
    const { app, lines } = appAnswering((c) => c.json({ transactionId: 'txn_1' }, 201));
    const res = await app.request('/op', { method: 'POST' });
    expect(res.status).toBe(500);
    expect(await problemSlug(res)).toBe('internal');
    expect(lines.join('')).toContain('response breaks the contract');
  });

  it('leaves problem answers of inner errors alone', async () => {
    const { app, lines } = appAnswering(() => {
      throw new AppError('not-found', 'No such payout.');
    });
    const res = await app.request('/op', { method: 'POST' });
    expect(res.status).toBe(404);
    expect(lines.join('')).not.toContain('response breaks the contract');
  });
});
