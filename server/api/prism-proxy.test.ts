// Every operation's scenarios through `prism proxy --errors` in front of the real server: Prism
// checks each request and each response against the spec, and answers with an error instead
// of a response that breaks it, so any contract violation of the server fails this test.
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../testing/child-server.ts';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManagementClient, createOrdersClient, createSandboxClient, createTransactionsClient } from '../../client/api.ts';
import { API_NAMES, type ApiName } from '../../generated/vocabulary.ts';
import { createServiceAccount } from '../domain/admin.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { until } from '../../testing/until.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const APIS: readonly ApiName[] = API_NAMES;

let server: TestServer;
const proxies: ChildProcess[] = [];
const base = {} as Record<ApiName, string>;
const prismLog: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_RPS: '0' } });
  for (const api of APIS) {
    const port = await freePort();
    const child = spawn(
      path.join(ROOT, 'node_modules', '.bin', 'prism'),
      ['proxy', path.join(ROOT, 'spec', `${api}.openapi.yaml`), server.url, '--errors', '--port', String(port), '--host', '127.0.0.1'],
      { env: { ...process.env, NO_UPDATE_NOTIFIER: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (c: Buffer) => prismLog.push(`[${api}] ${c.toString()}`));
    child.stderr?.on('data', (c: Buffer) => prismLog.push(`[${api}] ${c.toString()}`));
    proxies.push(child);
    base[api] = `http://127.0.0.1:${port}`;
  }
  for (const api of APIS) {
    await until(() => fetch(`${base[api]}/healthz`).then(() => true, () => false), () => `the prism proxy for ${api}\n${prismLog.join('')}`, { timeoutMs: 120_000, everyMs: 200 });
  }
}, 300_000);

afterAll(async () => {
  for (const p of proxies) p.kill('SIGTERM');
  await server?.close();
});

/** Prism marks violations in `sl-violations`; with --errors a violating response becomes an error status. */
function clean(res: Response): void {
  const violations = res.headers.get('sl-violations');
  expect(violations, `${res.url}: ${violations}\n${prismLog.slice(-5).join('')}`).toBeNull();
}

describe('API scenarios through prism proxy --errors', () => {
  it('keeps every operation inside the contract', async () => {
    const t = await server.newTenant('Prism');
    const creds = { apiKey: t.apiKey, apiHash: t.apiHash, tenantId: t.tenantId };
    const tx = createTransactionsClient({ baseUrl: base.transactions, ...creds });
    const orders = createOrdersClient({ baseUrl: base.orders, ...creds });
    const sandbox = createSandboxClient({ baseUrl: base.sandbox, ...creds });
    const mgmt = createManagementClient({ baseUrl: base.management, memberToken: t.memberToken });
    await createServiceAccount(server.services, { tenantId: t.tenantId, email: 'refunds@prism.test' });
    const expectStatus = (r: { response: Response }, status: number): void => {
      clean(r.response);
      expect(r.response.status, r.response.url).toBe(status);
    };

    // Transactions API and the sandbox's money operations.
    const payout = await tx.POST('/transactions/payout', { body: { thirdPartyId: 'prism-1', userId: 'user-p', amount: 12.5, notifyUrl: 'http://127.0.0.1:9/cb' } });
    expectStatus(payout, 201);
    expectStatus(await tx.POST('/transactions/payout', { body: { thirdPartyId: 'prism-1', userId: 'user-p', amount: 12.5 } }), 409);
    expectStatus(await tx.POST('/transactions/payout', { body: { thirdPartyId: 'prism-big', userId: 'user-p', amount: 999999999 } }), 422);
    const staking = await tx.POST('/transactions/staking/payout', { body: { thirdPartyId: 'prism-s', userId: 'user-p', usdAmount: 100, asset: 'KRU' } });
    expectStatus(staking, 201);
    expectStatus(await tx.POST('/transactions/staking/payout/revoke', { body: { transactionId: staking.data!.transactionId } }), 200);
    expectStatus(await tx.POST('/transactions/staking/payout/revoke', { body: { transactionId: staking.data!.transactionId } }), 409);
    expectStatus(await tx.GET('/transactions/users', { params: { query: { userId: 'user-p' } } }), 200);
    expectStatus(await tx.GET('/transactions', { params: { query: { txHash: 'nothing' }, header: { 'x-tenant-id': t.tenantId } } }), 404);
    expectStatus(await sandbox.GET('/sandbox/wallet'), 200);
    expectStatus(await sandbox.POST('/sandbox/wallet/fund', { body: { amount: 10 } }), 200);
    expectStatus(await sandbox.POST('/sandbox/payouts/{transactionId}/settle', { params: { path: { transactionId: payout.data!.transactionId } }, body: { status: 'success' } }), 200);
    const payment = await sandbox.POST('/sandbox/payments', { body: { userId: 'user-p', amount: 3, txHash: 'abc123prism' } });
    expectStatus(payment, 201);
    expectStatus(await tx.POST('/transactions/refund', { body: { txId: payment.data!.id, email: 'nobody@prism.test' } }), 422);
    expectStatus(await tx.POST('/transactions/refund', { body: { txId: payment.data!.id, email: 'refunds@prism.test' } }), 200);
    expectStatus(await tx.POST('/transactions/refund', { body: { txId: payment.data!.id, email: 'refunds@prism.test' } }), 409);

    // Webhook management (the endpoint makes every order event below a delivery).
    const endpoint = await mgmt.POST('/v2/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/hooks' } });
    expectStatus(endpoint, 201);
    const endpointId = endpoint.data!.id;
    // Another active endpoint at the same URL (endpoint-exists), and an event type the AsyncAPI document does not route.
    expectStatus(await mgmt.POST('/v2/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/hooks' } }), 409);
    expectStatus(await mgmt.POST('/v2/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/other', eventTypes: ['order.shipped'] } }), 422);
    expectStatus(await mgmt.GET('/v2/webhooks/endpoints'), 200);
    expectStatus(await mgmt.GET('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } } }), 200);
    expectStatus(await mgmt.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId } } }), 201);

    // v2 orders and the sandbox's order operations.
    const order = await orders.POST('/v2/orders', { body: { merchantReference: 'prism-cart', amountMinor: 4999, amountBaseUnits: '1000' } });
    expectStatus(order, 201);
    const orderId = order.data!.orderId;
    expectStatus(await sandbox.POST('/sandbox/orders/{orderId}/deposits', { params: { path: { orderId } }, body: { amountBaseUnits: '400', verified: true, txHash: 'dep1prism' } }), 201);
    expectStatus(await sandbox.POST('/sandbox/orders/{orderId}/deposits', { params: { path: { orderId } }, body: { amountBaseUnits: '700', verified: true, txHash: 'dep2prism' } }), 201);
    expectStatus(await tx.GET('/transactions', { params: { query: { txHash: 'dep2prism' }, header: { 'x-tenant-id': t.tenantId } } }), 200);
    expectStatus(await orders.GET('/v2/orders/{orderId}', { params: { path: { orderId } } }), 200);
    expectStatus(await sandbox.POST('/sandbox/orders/{orderId}/review', { params: { path: { orderId } }, body: { reason: 'deposit_revoked' } }), 200);
    expectStatus(await sandbox.POST('/sandbox/orders/{orderId}/cancel', { params: { path: { orderId } } }), 200);
    expectStatus(await orders.GET('/v2/orders/{orderId}', { params: { path: { orderId } } }), 404);
    expectStatus(await orders.GET('/v2/orders/{orderId}/payments', { params: { path: { orderId } } }), 200);
    expectStatus(await orders.GET('/v2/events', { params: { query: { limit: 5 } } }), 200);

    // Deliveries, then the endpoint's changes.
    const deliveries = await mgmt.GET('/v2/webhooks/deliveries', { params: { query: { limit: 5 } } });
    expectStatus(deliveries, 200);
    const deliveryId = deliveries.data!.data[0]!.id;
    expectStatus(await mgmt.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId } } }), 200);
    expectStatus(await mgmt.GET('/v2/webhooks/deliveries', { params: { query: { q: orderId } } }), 200);
    expectStatus(await mgmt.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } }, body: { url: 'http://127.0.0.1:9/moved' } }), 200);
    expectStatus(await mgmt.POST('/v2/webhooks/endpoints/{endpointId}/rotate-secret', { params: { path: { endpointId } } }), 200);
    expectStatus(await mgmt.POST('/v2/webhooks/callback-secret/rotate'), 200);
    expectStatus(await mgmt.PATCH('/v2/webhooks/endpoints/{endpointId}', { params: { path: { endpointId } }, body: { active: false } }), 200);
    expectStatus(await mgmt.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId } } }), 409);
    expectStatus(await mgmt.POST('/v2/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId } } }), 409);

    // Authentication and permission errors are part of the contract too.
    const anonymous = createTransactionsClient({ baseUrl: base.transactions, apiKey: t.apiKey, apiHash: 'sk_test_wrong' });
    expectStatus(await anonymous.GET('/transactions/users', { params: { query: { userId: 'user-p' } } }), 401);
  }, 120_000);
});
