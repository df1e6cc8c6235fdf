// NUL characters are refused at the edge with 400, on every store (PostgreSQL text cannot
// hold them, so letting one through would be a 500 there), and nothing is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_RPS: '0' } });
});
afterAll(async () => {
  await server.close();
});

describe('NUL characters', () => {
  it('answers 400 naming the field for a NUL in a body string, and creates nothing', async () => {
    const t = await server.newTenant();
    const res = await fetch(`${server.url}/v2/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash },
      body: JSON.stringify({ merchantReference: 'cart\u0000-1', amountMinor: 100 }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await res.json()) as { type: string; errors: Array<{ pointer: string }> };
    expect(problem.type).toBe('https://errors.payments.example/validation-failed');
    expect(problem.errors).toContainEqual({ pointer: '/body/merchantReference', detail: 'must not contain NUL characters' });
    const events = await t.orders.GET('/v2/events');
    expect(events.data?.data).toEqual([]);
  });

  it('answers 400 for a NUL in a query parameter (a delivery search)', async () => {
    const t = await server.newTenant();
    const res = await fetch(`${server.url}/v2/webhooks/deliveries?q=order%00x`, { headers: { authorization: `Bearer ${t.memberToken}` } });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: Array<{ pointer: string }> };
    expect(problem.errors).toContainEqual({ pointer: '/query/q', detail: 'must not contain NUL characters' });
  });
});
