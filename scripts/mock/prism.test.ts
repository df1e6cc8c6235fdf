// Prism's engine in process: a payout that names a notifyUrl has its callback fired (Prism logs
// it as it starts it), one without fires none and so logs no failed callback.
import { describe, expect, it } from 'vitest';
import { loadDocument } from '../../server/contract/operations.ts';
import { prismDocument, startPrism, type PrismRequest } from './prism.ts';

const CREDS = { 'x-api-key': 'pk_test_prism', 'x-api-hash': 'sk_test_prism', 'content-type': 'application/json' };
const payout = (body: Record<string, unknown>, callbacks: boolean): PrismRequest => ({ method: 'POST', path: '/transactions/payout', query: {}, headers: CREDS, body, prefer: {}, callbacks });

describe('startPrism', () => {
  it('fires the payout callback only for a request that names its URL', async () => {
    const lines: string[] = [];
    const prism = await startPrism(prismDocument(loadDocument('transactions')), (line) => lines.push(line));
    const without = await prism.answer(payout({ thirdPartyId: 'p-1', userId: 'user_1', amount: 1.5 }, false));
    expect(without.status).toBe(201);
    expect(lines.filter((l) => l.startsWith('[CALLBACK]'))).toEqual([]);
    // A port nothing listens on: the callback is started (and logged), then fails.
    const withUrl = await prism.answer(payout({ thirdPartyId: 'p-2', userId: 'user_1', amount: 1.5, notifyUrl: 'http://127.0.0.1:9/cb' }, true));
    expect(withUrl.status).toBe(201);
    expect(lines.some((l) => l.startsWith('[CALLBACK]') && l.includes('http://127.0.0.1:9/cb'))).toBe(true);
  }, 60_000);

  it('answers the status and example that Prefer names', async () => {
    const prism = await startPrism(prismDocument(loadDocument('orders')));
    const answer = await prism.answer({ method: 'GET', path: '/v2/orders/x', query: {}, headers: CREDS, body: undefined, prefer: { code: 404 }, callbacks: false });
    expect(answer.status).toBe(404);
    expect((answer.body as { type: string }).type).toBe('https://errors.payments.example/not-found');
  }, 60_000);
});
