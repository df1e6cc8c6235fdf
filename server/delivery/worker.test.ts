import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { ManualClock } from '../domain/clock.ts';
import type { Services } from '../domain/context.ts';
import { createSecretBox } from '../domain/secrets.ts';
import { recordPayoutCallback } from '../domain/events.ts';
import { updateEndpoint } from '../domain/endpoints/endpoints.ts';
import { openTestStore } from '../testing/store.ts';
import type { AttemptResult, DeliveryQueue, Store } from '../domain/store.ts';
import type { AttemptRecord, DeliveryRecord } from '../domain/model.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from './schedule.ts';
import { createSender, type Sender } from './sender.ts';
import {
  answer,
  captureLogger,
  closedPort,
  FakeTimers,
  fakeResolver,
  loopbackPolicy,
  neverAnswer,
  recordEvent,
  seedEndpoint,
  startReceiver,
  type Receiver,
  type ReceivedRequest,
} from './testing.ts';
import { COMPLETE_LINGER_MIN, MAX_IDLE_MS, createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from './worker.ts';
import { until } from '../../testing/until.ts';

// Real HTTP to 127.0.0.1 receivers, the real SQLite store in a temp file, a ManualClock for
// the schedule (so ten attempts over ~16 hours run in milliseconds), and injected timers where
// the loop's waits matter.


/** The first truthy value fn() gives (the one until() of testing/until.ts). */
const eventually = <T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> =>
  until(fn, 'the worker to get there', timeoutMs) as Promise<T>;

let store: Store;
let clock: ManualClock;
let services: Services;
let logs: ReturnType<typeof captureLogger>;
const senders: Sender[] = [];
const receivers: Receiver[] = [];
const workers: DeliveryWorker[] = [];

beforeEach(async () => {
  store = await openTestStore();
  clock = new ManualClock();
  logs = captureLogger();
  services = { store, clock, secrets: createSecretBox(randomBytes(32)), destinations: loopbackPolicy(), log: logs.log };
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
  await Promise.all(senders.splice(0).map((s) => s.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await store.close();
});

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

/** The test store with some of its queue's operations replaced (to count or delay them). */
function withQueue(overrides: Partial<DeliveryQueue>): Store {
  return Object.create(store, { queue: { value: { ...store.queue, ...overrides } } }) as Store;
}

function worker(opts: Partial<DeliveryWorkerOptions> & { timeoutMs?: number } = {}): DeliveryWorker {
  // A receiver on loopback answers at once, but on a machine with more work than cores its
  // answer can take seconds: tests of a timeout pass their own short one.
  const sender = opts.sender ?? createSender({ policy: services.destinations, timeoutMs: opts.timeoutMs ?? 10_000 });
  senders.push(sender);
  const w = createDeliveryWorker({
    store,
    secrets: services.secrets,
    sender,
    clock,
    retry: { scale: 1, random: () => 0.5 },
    log: logs.log,
    ...opts,
  });
  workers.push(w);
  return w;
}

/**
 * A started worker on timers that fire only when told to, and `look()`: it has the worker look
 * at the queue now and resolves once the worker is idle again, holding no lease (every attempt
 * it made is recorded) and asleep, with the length of that sleep (until the next delivery is
 * due, at most MAX_IDLE_MS). The tests drive the production loop this way, step by step.
 */
function driven(opts: Partial<DeliveryWorkerOptions> & { timeoutMs?: number } = {}): { w: DeliveryWorker; timers: FakeTimers; look(): Promise<number> } {
  const timers = new FakeTimers();
  const w = worker({ timers, ...opts });
  w.start();
  const look = async (): Promise<number> => {
    w.wake(); // clears the sleep at once, or has a look in progress look again
    await eventually(async () => timers.pending.size === 1 && w.inFlight() === 0);
    return timers.delays()[0]!;
  };
  return { w, timers, look };
}

async function delivery(environmentId: string, id: string): Promise<{ d: DeliveryRecord; attempts: AttemptRecord[] }> {
  return store.transaction(async (tx) => {
    const d = await tx.deliveries.get(environmentId, id);
    if (!d) throw new Error(`no delivery ${id}`);
    return { d, attempts: await tx.deliveries.attempts(id) };
  });
}

function timestampOf(r: ReceivedRequest): number {
  return Number(/^t=(\d+),/.exec(String(r.headers['service-signature']))?.[1]);
}

describe('delivery worker', () => {
  it('sends a body whose signature verifies, with the event id, and records the attempt', async () => {
    const rx = await receiver();
    const { scope, secret, endpoint } = await seedEndpoint(services, `${rx.url}/hooks/payments`);
    const { event, deliveryId } = await recordEvent(services, scope);

    expect(await driven().look()).toBe(MAX_IDLE_MS); // sent, recorded, nothing else due

    expect(rx.requests).toHaveLength(1);
    const seen = rx.requests[0]!;
    expect(seen.body.toString('utf8')).toBe(event.payload);
    const body = JSON.parse(seen.body.toString('utf8')) as { id: string };
    expect(seen.headers['service-event-id']).toBe(body.id);
    expect(body.id).toBe(event.id);
    expect(seen.headers['user-agent']).toBe('PaymentsService-Webhooks/2.0');
    expect(seen.headers['content-type']).toBe('application/json');

    // The merchant's helper accepts it...
    const verified = verifyWebhook<{ id: string }>({ rawBody: seen.body, headers: seen.headers, secrets: secret, now: () => clock.now() });
    expect(verified.eventId).toBe(event.id);
    expect(verified.timestamp).toBe(Math.floor(clock.now() / 1000));
    // ...and so does an independent HMAC over "<t>.<raw body>".
    const t = timestampOf(seen);
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.`).update(seen.body).digest('hex');
    expect(seen.headers['service-signature']).toBe(`t=${t},v1=${expected}`);

    const { d, attempts } = await delivery(scope.environmentId, deliveryId);
    expect(d).toMatchObject({ state: 'delivered', attemptCount: 1, deliveredAt: clock.now(), leaseOwner: null, nextAttemptAt: null });
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ cycle: 1, number: 1, outcome: 'response', statusCode: 200, success: true, signatureTimestamp: t, responseBody: '{"received":true}' });

    // Neither the secret nor the signature is ever logged.
    const logText = logs.lines.join('');
    expect(logText).toContain(deliveryId);
    expect(logText).not.toContain(secret);
    expect(logText).not.toContain(expected);
    expect(logText).not.toContain(endpoint.secretEnc);
  });

  it('signs every attempt with a fresh t', async () => {
    const rx = await receiver({ handler: (req, res, body, i) => answer(i === 0 ? 500 : 200)(req, res, body, i) });
    const { scope, secret } = await seedEndpoint(services, rx.url);
    const { event, deliveryId } = await recordEvent(services, scope);
    const { look } = driven();

    expect(await look()).toBe(RETRY_DELAYS_MS[0]!); // asleep until the retry is due
    clock.advance(RETRY_DELAYS_MS[0]!);
    expect(await look()).toBe(MAX_IDLE_MS);
    expect(rx.requests).toHaveLength(2);

    const [first, second] = rx.requests;
    expect(timestampOf(second!) - timestampOf(first!)).toBe(RETRY_DELAYS_MS[0]! / 1000);
    for (const r of [first!, second!]) {
      expect(r.headers['service-event-id']).toBe(event.id);
      expect(r.body.toString()).toBe(event.payload);
      const now = timestampOf(r) * 1000;
      expect(() => verifyWebhook({ rawBody: r.body, headers: r.headers, secrets: secret, now: () => now })).not.toThrow();
    }
    const { attempts } = await delivery(scope.environmentId, deliveryId);
    expect(attempts.map((a) => a.signatureTimestamp).sort()).toEqual([timestampOf(first!), timestampOf(second!)]);
  });

  it('makes ten attempts on the schedule against a failing endpoint, then fails, and never an eleventh', async () => {
    const rx = await receiver({ handler: answer(503, 'maintenance') });
    const { scope } = await seedEndpoint(services, rx.url);
    const { deliveryId } = await recordEvent(services, scope);
    const { look } = driven();
    const start = clock.now();

    for (let n = 1; n <= MAX_ATTEMPTS; n++) {
      const sleep = await look();
      expect(rx.requests).toHaveLength(n);
      const { d } = await delivery(scope.environmentId, deliveryId);
      expect(d.attemptCount).toBe(n);
      if (n < MAX_ATTEMPTS) {
        expect(d.state).toBe('pending');
        expect(d.nextAttemptAt).toBe(clock.now() + RETRY_DELAYS_MS[n - 1]!);
        expect(sleep).toBe(Math.min(RETRY_DELAYS_MS[n - 1]!, MAX_IDLE_MS)); // until it is due (the safety net caps it)
        // Not a millisecond early: a look then claims nothing and sleeps the last millisecond...
        clock.set(d.nextAttemptAt! - 1);
        expect(await look()).toBe(1);
        expect(rx.requests).toHaveLength(n);
        clock.set(d.nextAttemptAt!);
      } else expect(sleep).toBe(MAX_IDLE_MS);
    }
    const { d, attempts } = await delivery(scope.environmentId, deliveryId);
    expect(d).toMatchObject({ state: 'failed', attemptCount: MAX_ATTEMPTS, nextAttemptAt: null, leaseOwner: null });
    expect(attempts.map((a) => a.number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(attempts.every((a) => a.statusCode === 503 && !a.success && a.responseBody === 'maintenance' && a.cycle === 1)).toBe(true);
    expect(clock.now() - start).toBe(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0));

    clock.advance(7 * 24 * 3_600_000);
    expect(await look()).toBe(MAX_IDLE_MS);
    expect(rx.requests).toHaveLength(MAX_ATTEMPTS);
  });

  it('retries timeouts and connection resets like any failure', async () => {
    const rx = await receiver({
      handler: (req, res, body, i) => {
        if (i === 0) return neverAnswer(req, res, body, i);
        if (i === 1) return void req.socket.destroy();
        return answer(200)(req, res, body, i);
      },
    });
    const { scope } = await seedEndpoint(services, rx.url);
    const { deliveryId } = await recordEvent(services, scope);
    const { look } = driven({ timeoutMs: 200 });
    for (let i = 0; i < 3; i++) {
      await look();
      expect(rx.requests).toHaveLength(i + 1);
      const { d } = await delivery(scope.environmentId, deliveryId);
      if (d.nextAttemptAt !== null) clock.set(d.nextAttemptAt);
    }
    const { d, attempts } = await delivery(scope.environmentId, deliveryId);
    expect(d.state).toBe('delivered');
    expect(attempts.sort((a, b) => a.number - b.number).map((a) => a.errorClass ?? a.statusCode)).toEqual(['timeout', 'connection_reset', 200]);
  });

  it('retries DNS failures and refused destinations (DNS can change back)', async () => {
    services.destinations = loopbackPolicy(fakeResolver({ 'internal.northwind.example': [{ address: '10.0.0.1', family: 4 }] }));
    const missing = await seedEndpoint(services, 'http://hooks.northwind.example/payments');
    const internal = await seedEndpoint(services, 'http://internal.northwind.example/payments');
    const refused = await seedEndpoint(services, `http://127.0.0.1:${await closedPort()}/payments`);
    const ids = [
      [missing, (await recordEvent(services, missing.scope)).deliveryId, 'dns_failure'],
      [internal, (await recordEvent(services, internal.scope)).deliveryId, 'destination_not_allowed'],
      [refused, (await recordEvent(services, refused.scope)).deliveryId, 'connection_refused'],
    ] as const;
    expect(await driven().look()).toBe(RETRY_DELAYS_MS[0]!); // all three attempted, asleep until their retries
    for (const [seeded, id, errorClass] of ids) {
      const { d, attempts } = await delivery(seeded.scope.environmentId, id);
      expect(d).toMatchObject({ state: 'pending', attemptCount: 1, nextAttemptAt: clock.now() + RETRY_DELAYS_MS[0]! });
      expect(attempts).toMatchObject([{ outcome: 'error', statusCode: null, errorClass, success: false, responseBody: null }]);
    }
  });

  it('signs a payout callback with the environment callback secret', async () => {
    const rx = await receiver();
    const { scope, callbackSecret, secret } = await seedEndpoint(services, `${rx.url}/unused`);
    const { event, deliveryId } = await services.store.transaction((tx) =>
      recordPayoutCallback(tx, services, scope, {
        transactionId: 'txn_01KAMV3X8Y2Z4A6B8C0D2E4F6G',
        thirdPartyId: 'payout-2026-11-0042',
        amount: '25.5',
        status: 'success',
        notifyUrl: `${rx.url}/payout-callbacks`,
      }),
    );
    await driven().look();
    expect(rx.requests).toHaveLength(1);
    const seen = rx.requests[0]!;
    expect(seen.url).toBe('/payout-callbacks');
    expect(seen.headers['service-event-id']).toBe(event.id);
    expect(JSON.parse(seen.body.toString())).toEqual({ transactionId: 'txn_01KAMV3X8Y2Z4A6B8C0D2E4F6G', thirdPartyId: 'payout-2026-11-0042', amount: 25.5, status: 'success' });
    expect(verifyWebhook({ rawBody: seen.body, headers: seen.headers, secrets: callbackSecret, now: () => clock.now() }).eventId).toBe(event.id);
    expect(() => verifyWebhook({ rawBody: seen.body, headers: seen.headers, secrets: secret, now: () => clock.now() })).toThrow();
    expect((await delivery(scope.environmentId, deliveryId)).d.state).toBe('delivered');
  });

  it('delivers after three failures with four attempts stored', async () => {
    const rx = await receiver({ handler: (req, res, body, i) => answer(i < 3 ? 500 : 204)(req, res, body, i) });
    const { scope } = await seedEndpoint(services, rx.url);
    const { deliveryId } = await recordEvent(services, scope);
    const { look } = driven();
    for (let n = 1; n <= 4; n++) {
      await look();
      expect(rx.requests).toHaveLength(n);
      const { d } = await delivery(scope.environmentId, deliveryId);
      if (d.nextAttemptAt !== null) clock.set(d.nextAttemptAt);
    }
    const { d, attempts } = await delivery(scope.environmentId, deliveryId);
    expect(d).toMatchObject({ state: 'delivered', attemptCount: 4, deliveredAt: clock.now() });
    expect(attempts.sort((a, b) => a.number - b.number).map((a) => [a.number, a.statusCode, a.success])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 500, false],
      [4, 204, true],
    ]);
    expect(await look()).toBe(MAX_IDLE_MS);
    expect(rx.requests).toHaveLength(4);
  });

  it("honours a 429's Retry-After, unscaled, for the delivery and for the endpoint's next delivery; the attempt counts", async () => {
    const rx = await receiver({ handler: (req, res, body, i) => answer(i === 0 ? 429 : 200, '', i === 0 ? { 'retry-after': '120' } : {})(req, res, body, i) });
    const { scope } = await seedEndpoint(services, rx.url);
    const first = await recordEvent(services, scope);
    // WEBHOOK_RETRY_SCALE shortens our 5 s to 5 ms: never the receiver's 120 s.
    const { look } = driven({ retry: { scale: 0.001, random: () => 0.5 } });
    await look();
    const throttled = await delivery(scope.environmentId, first.deliveryId);
    expect(throttled.d).toMatchObject({ state: 'pending', attemptCount: 1, nextAttemptAt: clock.now() + 120_000 });
    expect(throttled.attempts.map((a) => a.statusCode)).toEqual([429]);
    const second = await recordEvent(services, scope, { orderId: '0b1c2a9e-4b7d-4e0a-9c55-3d2f8b1a7e11' });
    clock.advance(119_999);
    await look(); // the endpoint is paused: its new delivery, due now, waits too
    expect(rx.requests).toHaveLength(1);
    clock.advance(1);
    await look();
    expect(rx.requests).toHaveLength(3);
    for (const { deliveryId } of [first, second]) expect((await delivery(scope.environmentId, deliveryId)).d.state).toBe('delivered');
  });

  it('holds the deliveries it holds for a throttled endpoint until its Retry-After ends, on its clock', async () => {
    const rx = await receiver({ handler: (req, res, body, i) => answer(i === 0 ? 503 : 200, '', i === 0 ? { 'retry-after': '2' } : {})(req, res, body, i) });
    const { scope } = await seedEndpoint(services, rx.url);
    await recordEvent(services, scope);
    await recordEvent(services, scope, { orderId: '0b1c2a9e-4b7d-4e0a-9c55-3d2f8b1a7e11' });
    // One at a time: the second is claimed with the first and waits in this worker's ready queue.
    const timers = new FakeTimers();
    const w = worker({ timers, perEndpointLimit: 1, maxPerEndpointLimit: 1, retry: { scale: 0.001, random: () => 0.5 } });
    w.start();
    await rx.waitFor(1);
    await eventually(async () => timers.delays().includes(2_000) && w.inFlight() === 0);
    expect(rx.requests).toHaveLength(1);
    clock.advance(2_000);
    timers.fireAll();
    await rx.waitFor(3);
    expect(rx.requests).toHaveLength(3);
  });

  it("spaces an endpoint's attempts by its maxPerSecond, on its clock: over the cap they wait, none is dropped", async () => {
    const rx = await receiver();
    const { scope, endpoint } = await seedEndpoint(services, rx.url);
    await store.transaction((tx) => tx.endpoints.update({ ...endpoint, maxPerSecond: 2 }));
    for (let i = 0; i < 3; i++) await recordEvent(services, scope, { orderId: `0b1c2a9e-4b7d-4e0a-9c55-3d2f8b1a7e1${i}` });
    const timers = new FakeTimers();
    const w = worker({ timers });
    w.start();
    for (let n = 1; n <= 3; n++) {
      await rx.waitFor(n);
      if (n === 3) break;
      // The next one waits exactly 1000 / 2 ms on the clock, however long the test takes.
      await eventually(async () => timers.delays().includes(500) && w.inFlight() === 0);
      expect(rx.requests).toHaveLength(n);
      clock.advance(500);
      timers.fireAll();
    }
    expect(rx.requests).toHaveLength(3);
  });

  it('stops pacing an endpoint whose cap was removed (PATCH maxPerSecond null): its next deliveries go at once', async () => {
    const rx = await receiver();
    const { scope, endpoint } = await seedEndpoint(services, rx.url);
    await updateEndpoint(services, scope, endpoint.id, { maxPerSecond: 2 });
    await recordEvent(services, scope);
    const timers = new FakeTimers();
    const w = worker({ timers });
    w.start();
    await rx.waitFor(1);
    await eventually(async () => w.inFlight() === 0);
    await updateEndpoint(services, scope, endpoint.id, { maxPerSecond: null });
    // The capped send's own slot passes; after it nothing is held: a stale cap would hold the
    // next two for a timer that never fires here.
    clock.advance(500);
    for (let i = 0; i < 3; i++) await recordEvent(services, scope, { orderId: `0b1c2a9e-4b7d-4e0a-9c55-3d2f8b1a7e2${i}` });
    await rx.waitFor(4);
  });

  it('sends within milliseconds of the event being recorded (woken by the store, no polling)', async () => {
    const rx = await receiver();
    const { scope } = await seedEndpoint(services, rx.url);
    const timers = new FakeTimers(); // a poll could only come from these; they never fire here
    const w = worker({ timers });
    w.start();
    await eventually(async () => timers.pending.size === 1);
    expect(timers.delays()).toEqual([MAX_IDLE_MS]); // idle: the safety-net sleep only

    const before = Date.now();
    const { deliveryId } = await recordEvent(services, scope);
    await rx.waitFor(1, 2_000);
    expect(Date.now() - before).toBeLessThan(1_000); // milliseconds in practice; a poll would take 30 s
    await eventually(async () => (await delivery(scope.environmentId, deliveryId)).d.state === 'delivered');
  });

  it('sleeps until the next retry is due and sends it when the timer fires', async () => {
    const rx = await receiver({ handler: (req, res, body, i) => answer(i === 0 ? 500 : 200)(req, res, body, i) });
    const { scope } = await seedEndpoint(services, rx.url);
    const timers = new FakeTimers();
    const w = worker({ timers });
    w.start();
    const { deliveryId } = await recordEvent(services, scope);
    await rx.waitFor(1);
    // After the failed attempt the loop sleeps exactly until the retry is due (5 s), not a poll interval.
    await eventually(async () => timers.delays().includes(RETRY_DELAYS_MS[0]!) && timers.pending.size === 1);
    expect(rx.requests).toHaveLength(1);

    clock.advance(RETRY_DELAYS_MS[0]!);
    timers.fireAll();
    await rx.waitFor(2);
    await eventually(async () => (await delivery(scope.environmentId, deliveryId)).d.state === 'delivered');
  });

  it('refills a destination draining a backlog in a few large claims, not one per recorded batch', async () => {
    const rx = await receiver();
    const { scope } = await seedEndpoint(services, rx.url);
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push((await recordEvent(services, scope)).deliveryId);
    // Count the claims: direct ones, and those riding with a recorded batch.
    const claims: number[] = [];
    const queue = store.queue;
    const counted = withQueue({
      claim: async (o) => {
        const got = await queue.claim(o);
        claims.push(got.length);
        return got;
      },
      completeAndClaim: async (...args) => {
        const r = await queue.completeAndClaim(...args);
        if (args[2] !== null) claims.push(r.claimed.length);
        return r;
      },
    });
    // The manual clock stands still, so only running low on prefetched deliveries claims again.
    const w = worker({ store: counted, perEndpointLimit: 4, prefetchPerEndpoint: 64 });
    w.start();
    await rx.waitFor(300, 10_000);
    await eventually(async () => (await delivery(scope.environmentId, ids.at(-1)!)).d.state === 'delivered');
    expect(new Set(rx.requests.map((r) => r.headers['service-event-id'])).size).toBe(300);
    // A claim rides along only once fewer than half the prefetch (32) is left, so each one after
    // the first brings about 30 back; one claim per recorded batch would be dozens.
    expect(claims.reduce((a, b) => a + b, 0)).toBe(300);
    expect(claims.length).toBeLessThanOrEqual(1 + Math.ceil((300 - 64) / 28) + 2);
  });

  it('records attempts finishing while others are in flight in shared commits, and the last ones at once', async () => {
    const rx = await receiver();
    const { scope } = await seedEndpoint(services, rx.url);
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push((await recordEvent(services, scope)).deliveryId);
    const recorded: number[] = [];
    const queue = store.queue;
    const counted = withQueue({
      completeAndClaim: async (...args) => {
        recorded.push(args[1].length);
        return queue.completeAndClaim(...args);
      },
    });
    // These timers never fire, so the completer's linger never ends on its own: a record is
    // made only once COMPLETE_LINGER_MIN attempts have finished, or when nothing else is in flight.
    // The first claim prefetches all 200, so the worker never runs dry while waiting for a
    // claim (a slow database would otherwise leave it with nothing in flight mid-run).
    const timers = new FakeTimers();
    const w = worker({ store: counted, timers, perEndpointLimit: 4, prefetchPerEndpoint: 256 });
    w.start();
    await rx.waitFor(200, 10_000);
    await eventually(async () => (await delivery(scope.environmentId, ids.at(-1)!)).d.state === 'delivered');
    expect(recorded.reduce((a, b) => a + b, 0)).toBe(200);
    expect(recorded.slice(0, -1).every((n) => n >= COMPLETE_LINGER_MIN)).toBe(true);
    expect(recorded.length).toBeLessThanOrEqual(Math.ceil(200 / COMPLETE_LINGER_MIN) + 1);
    // A lone attempt (nothing else in flight) is recorded without waiting for anything.
    const lone = (await recordEvent(services, scope)).deliveryId;
    w.wake();
    await eventually(async () => (await delivery(scope.environmentId, lone)).d.state === 'delivered');
    expect(recorded.at(-1)).toBe(1);
  });

  it('does not let a slow endpoint delay another endpoint', async () => {
    const slow = await receiver({ handler: neverAnswer });
    const fast = await receiver();
    const slowTenant = await seedEndpoint(services, `${slow.url}/slow`);
    const fastTenant = await seedEndpoint(services, `${fast.url}/fast`);
    const w = worker({ timeoutMs: 2_000, perEndpointLimit: 4 });
    w.start();

    const slowDeliveries: string[] = [];
    for (let i = 0; i < 8; i++) slowDeliveries.push((await recordEvent(services, slowTenant.scope)).deliveryId);
    await slow.waitFor(4);
    const started = Date.now();
    const { deliveryId } = await recordEvent(services, fastTenant.scope);
    await fast.waitFor(1, 1_500);
    expect(Date.now() - started).toBeLessThan(1_500); // well before the slow attempts' 2 s deadline
    await eventually(async () => (await delivery(fastTenant.scope.environmentId, deliveryId)).d.state === 'delivered');

    // The slow endpoint is still in flight, and never had more than perEndpointLimit attempts at once.
    expect(w.inFlight()).toBe(4);
    expect(slow.requests).toHaveLength(4);
    for (const id of slowDeliveries) expect((await delivery(slowTenant.scope.environmentId, id)).d.attemptCount).toBe(0);
  });

  it("grows a fast endpoint's limit past its start with healthy answers, and never past its max", async () => {
    // Each answer a few milliseconds late, so attempts overlap and the endpoint uses its limit.
    const rx = await receiver({ handler: (req, res) => void setTimeout(() => answer(200, 'ok')(req, res, Buffer.alloc(0), 0), 5) });
    const { scope } = await seedEndpoint(services, rx.url);
    let open = 0;
    let most = 0;
    const inner = createSender({ policy: services.destinations, timeoutMs: 10_000 });
    const sender: Sender = {
      timeoutMs: inner.timeoutMs,
      close: () => inner.close(),
      async send(req) {
        most = Math.max(most, ++open);
        try {
          return await inner.send(req);
        } finally {
          open -= 1;
        }
      },
    };
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push((await recordEvent(services, scope)).deliveryId);
    // Healthy up to the attempt deadline: a loaded machine's slow answers do not halve it here.
    const w = worker({ sender, perEndpointLimit: 2, maxPerEndpointLimit: 6, healthyLatencyMs: 10_000 });
    w.start();
    await eventually(async () => (await Promise.all(ids.map((id) => delivery(scope.environmentId, id)))).every((x) => x.d.state === 'delivered'), 20_000);
    expect(most).toBeGreaterThan(2);
    expect(most).toBeLessThanOrEqual(6);
  });

  it('an attempt left open gives its shared slot up: one slot, a hanging destination, a healthy one still delivered', async () => {
    const hang = await receiver({ handler: neverAnswer });
    const fast = await receiver();
    const hangTenant = await seedEndpoint(services, `${hang.url}/hang`);
    const fastTenant = await seedEndpoint(services, `${fast.url}/fast`);
    // One shared slot and a deadline far away: without the slow budget the healthy delivery
    // would wait for the hanging attempt's 30 s deadline.
    const w = worker({ timeoutMs: 30_000, concurrency: 1, slowAfterMs: 20 });
    w.start();
    const hanging = await recordEvent(services, hangTenant.scope);
    await hang.waitFor(1);
    const { deliveryId } = await recordEvent(services, fastTenant.scope);
    await eventually(async () => (await delivery(fastTenant.scope.environmentId, deliveryId)).d.state === 'delivered', 20_000);
    // Delivered while the hanging attempt is still open and unrecorded.
    expect(w.inFlight()).toBe(1);
    expect((await delivery(hangTenant.scope.environmentId, hanging.deliveryId)).attempts).toHaveLength(0);
  });

  it('a destination whose last attempt failed is sent one attempt at a time until it answers', async () => {
    let open = 0;
    let most = 0;
    let counting = false;
    const rx = await receiver({ handler: answer(500, 'down') });
    const { scope } = await seedEndpoint(services, rx.url);
    // Sends in flight as the worker sees them (the receiver's view lags behind closed sockets).
    const inner = createSender({ policy: services.destinations, timeoutMs: 300 });
    const sender: Sender = {
      timeoutMs: inner.timeoutMs,
      close: () => inner.close(),
      async send(req) {
        open += 1;
        if (counting) most = Math.max(most, open);
        try {
          return await inner.send(req);
        } finally {
          open -= 1;
        }
      },
    };
    const w = worker({ sender, perEndpointLimit: 4 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await recordEvent(services, scope)).deliveryId);
    w.start();
    await eventually(async () => {
      const all = await Promise.all(ids.map((id) => delivery(scope.environmentId, id)));
      return all.every((x) => x.attempts.length === 1);
    });
    // Now it hangs; every retry is due: they go one at a time (each to its deadline).
    rx.handle(neverAnswer);
    counting = true;
    clock.advance(24 * 60 * 60 * 1000);
    w.wake();
    await eventually(async () => {
      const all = await Promise.all(ids.map((id) => delivery(scope.environmentId, id)));
      return all.every((x) => x.attempts.length === 2);
    }, 20_000);
    expect(most).toBe(1);
    // It answers again: one success clears the suspicion (the rest go up to perEndpointLimit at once).
    rx.handle(answer(200, 'ok'));
    clock.advance(24 * 60 * 60 * 1000);
    w.wake();
    await eventually(async () => {
      const all = await Promise.all(ids.map((id) => delivery(scope.environmentId, id)));
      return all.every((x) => x.d.state === 'delivered');
    }, 20_000);
  });

  it('two workers split a backlog over many destinations: each takes on only those it can send to now', async () => {
    const rx = await receiver();
    const seeded = [];
    for (let i = 0; i < 8; i++) seeded.push(await seedEndpoint(services, `${rx.url}/${i}`));
    const ids: Array<[string, string]> = [];
    for (const { scope } of seeded) for (let j = 0; j < 4; j++) ids.push([scope.environmentId, (await recordEvent(services, scope)).deliveryId]);
    // Which destinations each worker sent to.
    const sentTo = { a: new Set<string>(), b: new Set<string>() };
    const counted = (name: 'a' | 'b'): Sender => {
      const inner = createSender({ policy: services.destinations, timeoutMs: 300 });
      return { timeoutMs: inner.timeoutMs, close: () => inner.close(), send: (req) => (sentTo[name].add(req.url), inner.send(req)) };
    };
    // Two shared slots, one send at a time a destination (a fixed limit: it does not grow with
    // the answers): each worker wants two destinations. Without the spread bound the first claim
    // took all eight and the other worker idled.
    const fixed = { concurrency: 2, perEndpointLimit: 1, maxPerEndpointLimit: 1 };
    const a = worker({ owner: 'worker-a', sender: counted('a'), ...fixed });
    const b = worker({ owner: 'worker-b', sender: counted('b'), ...fixed });
    a.start();
    b.start();
    await eventually(async () => {
      const all = await Promise.all(ids.map(([env, id]) => delivery(env, id)));
      return all.every((x) => x.d.state === 'delivered' && x.attempts.length === 1);
    }, 20_000);
    expect(sentTo.a.size).toBeGreaterThan(0);
    expect(sentTo.b.size).toBeGreaterThan(0);
    expect(rx.requests).toHaveLength(32);
  });

  it('retries a delivery leased by a crashed worker only after the lease expires', async () => {
    const rx = await receiver();
    const { scope } = await seedEndpoint(services, rx.url);
    const { deliveryId } = await recordEvent(services, scope);
    const leaseMs = 30_000;
    const crashed = await store.queue.claim({ owner: 'crashed-worker', now: clock.now(), leaseMs, limit: 10, perEndpointLimit: 4 });
    expect(crashed.map((c) => c.delivery.id)).toEqual([deliveryId]);

    const { look } = driven({ owner: 'survivor' });
    expect(await look()).toBe(leaseMs); // asleep until the lease expires
    clock.advance(leaseMs - 1);
    expect(await look()).toBe(1);
    expect(rx.requests).toHaveLength(0);
    clock.advance(1);
    expect(await look()).toBe(MAX_IDLE_MS);
    expect(rx.requests).toHaveLength(1);
    const { d, attempts } = await delivery(scope.environmentId, deliveryId);
    expect(d).toMatchObject({ state: 'delivered', attemptCount: 1 });
    expect(attempts).toHaveLength(1);

    // The crashed worker coming back cannot record anything any more.
    const late = await store.queue.completeAndClaim(
      'crashed-worker',
      [{ deliveryId, leaseExpiresAt: crashed[0]!.delivery.leaseExpiresAt!, result: { attempt: { ...attempts[0]!, number: 1 }, state: 'failed', nextAttemptAt: null, deliveredAt: null } }],
      null,
    );
    expect(late.applied).toEqual([false]);
    expect((await delivery(scope.environmentId, deliveryId)).d.state).toBe('delivered');
  });

  it('keeps a delivery disabled when its endpoint changes while the attempt is in flight', async () => {
    let endpointId = '';
    const rx = await receiver({
      handler: async (req, res, body, i) => {
        // The merchant edits the endpoint (new version) while this attempt is being answered.
        await store.transaction((tx) => tx.deliveries.disableOlderVersions(endpointId, 2, clock.now()));
        answer(500, 'busy')(req, res, body, i);
      },
    });
    const seeded = await seedEndpoint(services, rx.url);
    endpointId = seeded.endpoint.id;
    const { deliveryId } = await recordEvent(services, seeded.scope);
    const { look } = driven();

    await look();
    expect(rx.requests).toHaveLength(1);
    const { d, attempts } = await delivery(seeded.scope.environmentId, deliveryId);
    expect(d.state).toBe('disabled');
    expect(d.leaseOwner).toBeNull();
    expect(attempts).toHaveLength(1); // the attempt is kept in the log
    clock.advance(24 * 3_600_000);
    expect(await look()).toBe(MAX_IDLE_MS);
    expect(rx.requests).toHaveLength(1);
  });

  it('records nothing when the lease was lost during the attempt, and logs it', async () => {
    const rx = await receiver({
      handler: async (req, res, body, i) => {
        // Simulates a lease taken over meanwhile: this process was paused past its lease, and
        // another worker claimed the delivery. (Giving the lease back instead would wake this
        // worker, whose loop would claim it again first.)
        clock.advance(60_000);
        await store.queue.claim({ owner: 'other-worker', now: clock.now(), leaseMs: 60_000, limit: 10, perEndpointLimit: 4 });
        answer(200)(req, res, body, i);
      },
    });
    const { scope } = await seedEndpoint(services, rx.url);
    const { deliveryId } = await recordEvent(services, scope);
    const told: AttemptResult[] = [];
    await driven({ onAttempt: (r) => told.push(r) }).look();
    expect(rx.requests).toHaveLength(1);
    const { d, attempts } = await delivery(scope.environmentId, deliveryId);
    expect(d).toMatchObject({ state: 'pending', attemptCount: 0, leaseOwner: 'other-worker' });
    expect(attempts).toHaveLength(0);
    expect(told).toEqual([]); // nothing recorded, nothing counted
    expect(logs.lines.some((l) => l.includes('lease lost') && l.includes(deliveryId))).toBe(true);
  });

  it('tells onAttempt of every attempt it recorded, with what it recorded', async () => {
    const rx = await receiver({ handler: (req, res, body, i) => answer(i === 0 ? 500 : 200)(req, res, body, i) });
    const { scope } = await seedEndpoint(services, rx.url);
    const { deliveryId } = await recordEvent(services, scope);
    const told: AttemptResult[] = [];
    const { look } = driven({ onAttempt: (r) => told.push(r) });
    await look();
    clock.advance(RETRY_DELAYS_MS[0]!);
    await look();
    const { attempts } = await delivery(scope.environmentId, deliveryId);
    expect(attempts).toHaveLength(2);
    expect(told.map((r) => r.state)).toEqual(['pending', 'delivered']);
    expect(told.map((r) => r.attempt)).toEqual([...attempts].sort((a, b) => a.number - b.number));
  });

  it('records a failed attempt without sending when the secret cannot be opened', async () => {
    const rx = await receiver();
    const { scope, endpoint } = await seedEndpoint(services, rx.url);
    await store.transaction((tx) => tx.endpoints.update({ ...endpoint, secretEnc: createSecretBox(randomBytes(32)).seal('whsec_sealed_under_another_key_0123456789') }));
    const { deliveryId } = await recordEvent(services, scope);
    expect(await driven().look()).toBe(RETRY_DELAYS_MS[0]!);
    expect(rx.requests).toHaveLength(0);
    const { d, attempts } = await delivery(scope.environmentId, deliveryId);
    expect(d).toMatchObject({ state: 'pending', attemptCount: 1, nextAttemptAt: clock.now() + RETRY_DELAYS_MS[0]! });
    expect(attempts).toMatchObject([{ outcome: 'error', errorClass: 'network_error', success: false }]);
    expect(logs.lines.join('')).not.toContain('whsec_');
  });

  it('drains on stop: in-flight attempts finish and are recorded', async () => {
    const rx = await receiver({ handler: (req, res, body, i) => void setTimeout(() => answer(200)(req, res, body, i), 150) });
    const { scope } = await seedEndpoint(services, rx.url);
    const w = worker({ timeoutMs: 2_000 });
    w.start();
    const { deliveryId } = await recordEvent(services, scope);
    await rx.waitFor(1);
    expect(w.inFlight()).toBe(1);
    await w.stop();
    expect(w.inFlight()).toBe(0);
    expect((await delivery(scope.environmentId, deliveryId)).d).toMatchObject({ state: 'delivered', attemptCount: 1, leaseOwner: null });

    // Stopped: nothing new is claimed. The commit wakes every worker of the store; a second
    // worker, started after it, sends the new delivery: had the stopped one claimed it too,
    // the receiver would have it twice or the attempt count would say so.
    const next = await recordEvent(services, scope);
    const marker = worker({ timeoutMs: 2_000 });
    marker.start();
    await rx.waitFor(2);
    await eventually(async () => (await delivery(scope.environmentId, next.deliveryId)).d.state === 'delivered');
    await marker.stop();
    expect(rx.requests).toHaveLength(2);
    expect((await delivery(scope.environmentId, next.deliveryId)).d).toMatchObject({ state: 'delivered', attemptCount: 1 });
  });

  it('releases what is still in flight after the grace period, without counting an attempt', async () => {
    const rx = await receiver({ handler: neverAnswer });
    const { scope } = await seedEndpoint(services, rx.url);
    const w = worker({ timeoutMs: 5_000 });
    w.start();
    const { deliveryId } = await recordEvent(services, scope);
    await rx.waitFor(1);
    const started = Date.now();
    await w.stop({ graceMs: 50 });
    expect(Date.now() - started).toBeLessThan(2_000);
    const { d, attempts } = await delivery(scope.environmentId, deliveryId);
    expect(d).toMatchObject({ state: 'pending', attemptCount: 0, leaseOwner: null, leaseExpiresAt: null });
    expect(attempts).toHaveLength(0);

    // Another worker can take it at once.
    rx.handle(answer(200));
    await driven().look();
    expect(rx.requests).toHaveLength(2);
    expect((await delivery(scope.environmentId, deliveryId)).d.state).toBe('delivered');
  });

  it('refuses a lease that does not outlive the attempt timeout by more than 5 s', () => {
    expect(() => worker({ timeoutMs: 10_000, leaseMs: 15_000 })).toThrow(/leaseMs/);
    expect(() => worker({ timeoutMs: 10_000, leaseMs: 9_000 })).toThrow(/leaseMs/);
    expect(() => worker({ timeoutMs: 10_000, leaseMs: 15_001 })).not.toThrow();
    // A lease computed from a deadline shorter than the sender's is refused too.
    const sender = createSender({ policy: services.destinations, timeoutMs: 10_000 });
    senders.push(sender);
    expect(() => worker({ sender, timeoutMs: 1_000 })).toThrow(/timeoutMs/);
  });
});
