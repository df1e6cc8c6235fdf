// The Prism mock answers from the spec's examples and refuses invalid requests.
import { freePort } from '../server/testing/child-server.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileOperation, loadOperations } from '../server/contract/operations.ts';
import { startMocks } from './mock.ts';

const createPayout = compileOperation(loadOperations('transactions').find((o) => o.operationId === 'createPayout')!);
const headers = { 'content-type': 'application/json', 'x-api-key': 'pk_test_mock', 'x-api-hash': 'sk_test_mock' };
let base = '';
let mocks: ReturnType<typeof startMocks> = [];

beforeAll(async () => {
  const port = await freePort();
  mocks = startMocks({ port, apis: ['transactions'] });
  base = `http://127.0.0.1:${port}`;
  // Prism needs a few seconds to load the documents.
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${base}/transactions/users?userId=u`, { headers }).then(() => true, () => false);
    if (up) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the mock did not start');
}, 60_000);

afterAll(() => {
  for (const m of mocks) m.child.kill('SIGTERM');
});

describe('npm run mock (Prism on the Transactions API)', () => {
  it('answers a valid payout with 201 and a body that matches the schema', async () => {
    const res = await fetch(`${base}/transactions/payout`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ thirdPartyId: 'mock-1', userId: 'user_5521', amount: 10.5 }),
    });
    expect(res.status).toBe(201);
    const body: unknown = await res.json();
    expect(createPayout.validateResponse(201, res.headers.get('content-type'), body)).toEqual([]);
  });

  it('refuses an invalid body with a documented 4xx problem', async () => {
    const res = await fetch(`${base}/transactions/payout`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ thirdPartyId: 'mock-2', amount: -3 }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(createPayout.validateResponse(res.status, res.headers.get('content-type'), await res.json())).toEqual([]);
  });

  it('refuses a request without credentials with 401', async () => {
    const res = await fetch(`${base}/transactions/payout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ thirdPartyId: 'mock-3', userId: 'u', amount: 1 }),
    });
    expect(res.status).toBe(401);
  });
});
