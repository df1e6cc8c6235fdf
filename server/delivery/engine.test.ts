import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { systemClock } from '../domain/clock.ts';
import type { Services } from '../domain/context.ts';
import { createSecretBox } from '../domain/secrets.ts';
import { openTestStore } from '../testing/store.ts';
import { createDeliveryEngine } from './engine.ts';
import { captureLogger, loopbackPolicy, recordEvent, seedEndpoint, startReceiver, testCertificate } from './testing.ts';


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
