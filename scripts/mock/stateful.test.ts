// `npm run mock -- --stateful` is the reference server's own code: payments-conformance api, its
// stateful checks included, passes against it with 0 failures; and the credentials a frontend's
// .env holds are the ones it serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiArgs, counts, idsWith, runTarget, startSink, type TargetRun } from '../../conformance-tests/testing/run.ts';
import { createTenant } from '../../server/domain/admin.ts';
import type { TestServer, TestTenant } from '../../server/testing/harness.ts';
import { givenCredentials, startStatefulMock, type RunningStatefulMock } from './stateful.ts';

const GIVEN = givenCredentials({ MOCK_API_KEY: 'pk_test_frontend_env', MOCK_API_HASH: 'sk_test_frontend_env_0123456789abcdefghij', MOCK_TENANT_ID: 'ten_frontend_env' });
let mock: RunningStatefulMock;
let sink: Awaited<ReturnType<typeof startSink>>;
let run: TargetRun;

beforeAll(async () => {
  mock = await startStatefulMock({ port: 0, given: GIVEN });
  sink = await startSink();
  const other = await createTenant(mock.services, { name: 'Other Merchant' });
  // apiArgs reads the server's URL and services only (for the second tenant, a limited key and the refund account).
  const server = { url: mock.url, services: mock.services } as TestServer;
  run = await runTarget(await apiArgs(server, mock.tenant as TestTenant, other as TestTenant, sink.url));
  console.log(`api target against npm run mock -- --stateful: ${counts(run.report)}`);
}, 300_000);

afterAll(async () => {
  await mock?.close();
  await sink?.close();
});

describe('npm run mock -- --stateful', () => {
  it('passes payments-conformance api, stateful checks included, with 0 failures', () => {
    expect(idsWith(run.report, 'failed'), run.output).toEqual([]);
    expect(idsWith(run.report, 'not_implemented')).toEqual([]);
    expect(run.exitCode).toBe(0);
    expect(run.report.totals.passed).toBeGreaterThan(400);
  });

  it('serves the credentials given in its settings, and keeps what is written', async () => {
    expect(mock.tenant).toMatchObject(GIVEN);
    const headers = { 'x-api-key': GIVEN.apiKey as string, 'x-api-hash': GIVEN.apiHash as string, 'content-type': 'application/json' };
    const created = await fetch(`${mock.url}/v2/orders`, { method: 'POST', headers, body: JSON.stringify({ merchantReference: 'cart-stateful', amountMinor: 4999 }) });
    const body = (await created.json()) as { orderId: string };
    expect(created.status, JSON.stringify(body)).toBe(201);
    const read = (await (await fetch(`${mock.url}/v2/orders/${body.orderId}`, { headers })).json()) as { merchantReference: string };
    expect(read.merchantReference).toBe('cart-stateful');
  });
});
