import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { systemClock } from '../domain/clock.ts';
import type { Services } from '../domain/context.ts';
import { createSecretBox } from '../domain/secrets.ts';
import { openTestStore } from '../testing/store.ts';
import { createDeliveryEngine } from './engine.ts';
import { answer, captureLogger, loopbackPolicy, recordEvent, seedEndpoint, startReceiver, testCertificate } from './testing.ts';
import { generateSecret } from '../../signing/signature.ts';
import { newEndpointRecord } from '../domain/endpoints/endpoints.ts';
import type { RoutableEventType } from '../domain/model.ts';


it('wires sender and worker from Services: an event recorded is delivered over https, then stop drains', async () => {
  const store = await openTestStore();
  const services: Services = { store, clock: systemClock, secrets: createSecretBox(randomBytes(32)), destinations: loopbackPolicy(), log: captureLogger().log };
  const cert = await testCertificate();
  const rx = await startReceiver({ tls: cert });
  try {
    const { scope, secret } = await seedEndpoint(services, `${rx.url}/hooks`);
    const engine = createDeliveryEngine(services, { retryScale: 0.001, tls: { ca: cert.cert } });
    expect(engine.sender.timeoutMs).toBe(10_000);
    engine.start();
    const { event } = await recordEvent(services, scope);
    const [seen] = await rx.waitFor(1);
    expect(verifyWebhook({ rawBody: seen!.body, headers: seen!.headers, secrets: secret }).eventId).toBe(event.id);
    await engine.stop();
    await engine.stop(); // idempotent
  } finally {
    await rx.close();
    await store.close();
  }
});

it('refuses a lease that an attempt could outlive', () => {
  const services = { destinations: loopbackPolicy() } as unknown as Services;
  expect(() => createDeliveryEngine(services, { retryScale: 1, timeoutMs: 10_000, leaseMs: 12_000 })).toThrow(/leaseMs/);
  expect(() => createDeliveryEngine(services, { retryScale: 0 })).toThrow(/retryScale/);
});

it('a 410 disables the endpoint after that one attempt; an alerting endpoint of the environment receives webhook_endpoint.disabled, reason gone, verified (issue 69)', async () => {
  const store = await openTestStore();
  const services: Services = { store, clock: systemClock, secrets: createSecretBox(randomBytes(32)), destinations: loopbackPolicy(), log: captureLogger().log };
  const gone = await startReceiver({ handler: answer(410, 'gone') });
  const alerts = await startReceiver();
  const engine = createDeliveryEngine(services, { retryScale: 0.001, watchdogMs: 0 });
  try {
    const { scope, endpoint } = await seedEndpoint(services, `${gone.url}/hooks`);
    const alertSecret = generateSecret();
    const alert = { ...newEndpointRecord(services, scope.environmentId, `${alerts.url}/alerts`, alertSecret, undefined, Date.now()), eventTypes: ['webhook_endpoint.disabled', 'order.paid'] as RoutableEventType[] };
    await store.transaction((tx) => tx.endpoints.insert(alert));
    engine.start();
    await recordEvent(services, scope);
    const [first] = await alerts.waitFor(1);
    const disabled = verifyWebhook({ rawBody: first!.body, headers: first!.headers, secrets: alertSecret });
    expect(disabled.event).toMatchObject({ type: 'webhook_endpoint.disabled', data: { endpointId: endpoint.id, reason: 'gone', lastStatusCode: 410, consecutiveFailures: 1 } });
    expect(await store.read((tx) => tx.endpoints.get(scope.environmentId, endpoint.id))).toMatchObject({ active: false, disabledReason: 'gone', version: endpoint.version + 1 });
    // A later event reaches the alerting endpoint (the marker) and never the disabled one.
    await recordEvent(services, scope, { type: 'order.paid', data: { orderId: '6f1c2a9e-4b7d-4e0a-9c55-3d2f8b1a7e10', merchantReference: 'INV-2026-0042', amountMinor: 4999, currency: 'USD', status: 'paid', receivedBaseUnits: '0' } });
    await alerts.waitFor(2);
    expect(gone.requests).toHaveLength(1);
  } finally {
    await engine.stop();
    await gone.close();
    await alerts.close();
    await store.close();
  }
});
