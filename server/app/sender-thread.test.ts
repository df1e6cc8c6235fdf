// The delivery engine's sending thread as buildApp wires it: the engine's destination policy
// (its resolver) reaches the thread; a thread that cannot start (a bundle missing its program)
// never costs a delivery its schedule: the webhook is delivered in-process at once, the failure
// is logged and counted, and /readyz says so once the thread is given up on.
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../testing/until.ts';
import { captureLogger, fakeResolver, startReceiver, type Receiver } from '../delivery/testing.ts';
import type { ThreadSenderOptions } from '../delivery/thread/thread-sender.ts';
import { startTestServer, type TestServer, type TestTenant } from '../testing/harness.ts';
import { buildApp } from './build-app.ts';

const TOKEN = 'metrics-token-for-tests-0123456789';
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

async function serverWithThread(program: string, opts: { restart?: ThreadSenderOptions['restart']; log?: ReturnType<typeof captureLogger>['log'] } = {}): Promise<{ server: TestServer; tenant: TestTenant; receiver: Receiver }> {
  const receiver = await startReceiver();
  closing.push(() => receiver.close());
  const senderThread = { entry: new URL(program, import.meta.url), execArgv: ['--import', 'tsx'], ...(opts.restart ? { restart: opts.restart } : {}) };
  const server = await startTestServer({
    env: { METRICS_TOKEN: TOKEN },
    resolve: fakeResolver({ 'receiver.test': [{ address: '127.0.0.1', family: 4 }] }),
    build: (services, config) => buildApp(services, config, { senderThread }),
    ...(opts.log ? { log: opts.log } : {}),
  });
  closing.push(() => server.close());
  return { server, tenant: await server.newTenant(), receiver };
}

async function endpointAt(tenant: TestTenant, url: string): Promise<string> {
  const endpoint = await tenant.management.POST('/v2/webhooks/endpoints', { body: { url } });
  expect(endpoint.response.status).toBe(201);
  return endpoint.data!.id;
}

/** Sends the endpoint a test webhook: the id of its delivery. */
async function testWebhook(tenant: TestTenant, endpointId: string): Promise<string> {
  const sent = await tenant.management.POST('/v2/webhooks/endpoints/{endpointId}/test', { params: { path: { endpointId } } });
  expect(sent.response.status).toBe(201);
  return sent.data!.id;
}

async function deliveredOnce(tenant: TestTenant, deliveryId: string): Promise<void> {
  const delivery = await until(async () => {
    const d = await tenant.management.GET('/v2/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId } } });
    return d.data?.state === 'delivered' && d.data;
  }, `delivery ${deliveryId} delivered`);
  expect(delivery.attempts.map((a) => a.errorClass ?? null)).toEqual([null]);
}

const metric = async (server: TestServer, name: string): Promise<number | undefined> => {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
};

describe('the sending thread in the app', () => {
  it("sends through the thread to a host name only the engine's resolver knows", async () => {
    const { server, tenant, receiver } = await serverWithThread('../delivery/thread/sender-thread.ts');
    await deliveredOnce(tenant, await testWebhook(tenant, await endpointAt(tenant, `http://receiver.test:${receiver.port}/hook`)));
    expect(receiver.requests).toHaveLength(1);
    expect(await metric(server, 'webhook_sender_thread_failures_total')).toBe(0);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('a thread that cannot start: each webhook is delivered in-process on its first attempt, the failures are logged and counted, and /readyz is 503 once it is given up on', async () => {
    const { log, lines } = captureLogger('info');
    const { server, tenant, receiver } = await serverWithThread('../delivery/thread/no-such-thread.ts', { restart: { firstMs: 1, maxMs: 1, giveUpAfter: 2 }, log });
    const endpointId = await endpointAt(tenant, `${receiver.url}/hook`);
    await deliveredOnce(tenant, await testWebhook(tenant, endpointId));
    expect(await metric(server, 'webhook_sender_thread_failures_total')).toBe(1);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    await deliveredOnce(tenant, await testWebhook(tenant, endpointId));
    expect(await metric(server, 'webhook_sender_thread_failures_total')).toBe(2);
    const readyz = await fetch(`${server.url}/readyz`);
    expect(readyz.status).toBe(503);
    expect(((await readyz.json()) as { detail: string }).detail).toBe('Not ready (delivery-stalled): the sending thread failed 2 times in a row (each logged); webhooks are sent from the API thread.');
    expect(receiver.requests).toHaveLength(2);
    expect(lines.filter((l) => l.includes('the sending thread failed'))).toHaveLength(2);
  });
});
