// Endpoint health under a fake clock (issue 69): the pure rules of nextHealth, then
// recordEndpointAttempts on a real store, where five days pass by setting the clock.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../secrets.ts';
import type { Services } from '../context.ts';
import type { Store } from '../store.ts';
import { openTestStore } from '../../testing/store.ts';
import { captureLogger, loopbackPolicy, recordEvent, seedEndpoint } from '../../delivery/testing.ts';
import { newEndpointRecord } from './endpoints.ts';
import { DISABLE_MIN_FAILURES, FAILING_AFTER, nextHealth, recordEndpointAttempts, type EndpointAttempt } from './health.ts';
import { HEALTHY } from '../model.ts';

const DAY = 24 * 3600_000;
const policy = { disableAfterMs: 5 * DAY };
const fail = (at: number, statusCode: number | null = 503) => ({ at, success: false, statusCode });
const ok = (at: number) => ({ at, success: true, statusCode: 200 });

describe('nextHealth', () => {
  it('counts a run of failures from its first attempt, raises failing once at the 4th, and a success ends the run with recovered', () => {
    const failures = Array.from({ length: FAILING_AFTER + 2 }, (_, i) => fail(1_000 + i));
    const step = nextHealth(HEALTHY, failures, policy, 9_000);
    expect(step.health).toEqual({ failingSince: 1_000, consecutiveFailures: FAILING_AFTER + 2, failingNotifiedAt: 9_000 });
    expect(step.raised.map((r) => [r.type, r.health.consecutiveFailures])).toEqual([['webhook_endpoint.failing', FAILING_AFTER]]);
    expect(step.disable).toBeNull();
    const back = nextHealth(step.health, [ok(2_000)], policy, 9_500);
    expect(back.health).toEqual(HEALTHY.failingSince === null ? { failingSince: null, consecutiveFailures: 0, failingNotifiedAt: null } : {});
    expect(back.raised).toMatchObject([{ type: 'webhook_endpoint.recovered', at: 2_000, health: { failingSince: 1_000 } }]);
  });

  it('raises nothing on a success that ends a run shorter than the failing threshold', () => {
    const step = nextHealth({ failingSince: 5, consecutiveFailures: FAILING_AFTER - 1, failingNotifiedAt: null }, [ok(10)], policy, 20);
    expect(step.raised).toEqual([]);
    expect(step.health.consecutiveFailures).toBe(0);
  });

  it('disables at once on a 410, whatever the run', () => {
    const step = nextHealth(HEALTHY, [fail(7, 410), fail(8)], policy, 9);
    expect(step.disable).toBe('gone');
    expect(step.raised).toMatchObject([{ type: 'webhook_endpoint.disabled', lastStatusCode: 410, health: { failingSince: 7, consecutiveFailures: 1 } }]);
  });

  it('disables as failing only after the period AND the minimum number of failures', () => {
    // Two failures five days apart: a quiet endpoint is not disabled.
    expect(nextHealth(HEALTHY, [fail(0), fail(6 * DAY)], policy, 6 * DAY).disable).toBeNull();
    // Many failures within less than the period: not yet.
    const quick = Array.from({ length: DISABLE_MIN_FAILURES + 5 }, (_, i) => fail(i * 1000));
    expect(nextHealth(HEALTHY, quick, policy, DAY).disable).toBeNull();
    // The minimum, the last one at the period's end.
    const long = Array.from({ length: DISABLE_MIN_FAILURES }, (_, i) => fail((i * 5 * DAY) / (DISABLE_MIN_FAILURES - 1)));
    const step = nextHealth(HEALTHY, long, policy, 5 * DAY + 1);
    expect(step.disable).toBe('failing');
    expect(step.raised.map((r) => r.type)).toEqual(['webhook_endpoint.failing', 'webhook_endpoint.disabled']);
  });
});

describe('recordEndpointAttempts (fake clock, real store)', () => {
  let store: Store;
  let services: Services;
  let now = Date.parse('2026-11-23T04:00:00.000Z');
  const clock = { now: () => now };

  beforeAll(async () => {
    store = await openTestStore();
    services = { store, clock, secrets: createSecretBox(randomBytes(32)), destinations: loopbackPolicy(), log: captureLogger().log };
  });
  afterAll(() => store.close());

  /** A failing endpoint and, in the same environment, an alerting one subscribed to the operational events. */
  async function seed() {
    const seeded = await seedEndpoint(services, 'http://127.0.0.1:9/failing');
    const alert = { ...newEndpointRecord(services, seeded.scope.environmentId, 'http://127.0.0.1:9/alerts', 'whsec_x', undefined, now), eventTypes: ['webhook_endpoint.failing', 'webhook_endpoint.disabled', 'webhook_endpoint.recovered'] as const };
    const everything = newEndpointRecord(services, seeded.scope.environmentId, 'http://127.0.0.1:9/all', 'whsec_y', undefined, now);
    await store.transaction(async (tx) => {
      await tx.endpoints.insert({ ...alert, eventTypes: [...alert.eventTypes] });
      await tx.endpoints.insert(everything);
    });
    return { ...seeded, alert, everything };
  }
  const attempt = (e: { id: string; environmentId: string; version: number }, success: boolean, statusCode: number | null): EndpointAttempt => ({
    environmentId: e.environmentId,
    endpointId: e.id,
    endpointVersion: e.version,
    at: now,
    success,
    statusCode,
  });
  const deps = () => ({ store, clock, policy });
  const deliveriesTo = (environmentId: string, endpointId: string) => store.read((tx) => tx.deliveries.list(environmentId, { q: null, limit: 100, cursor: null, endpointId }));

  it('disables an endpoint failing for five days and ten attempts, tells only the subscribed other endpoint, and lists the events in the feed', async () => {
    const { scope, endpoint, alert, everything } = await seed();
    await recordEvent(services, scope);
    const raised: string[] = [];
    for (let i = 0; i < DISABLE_MIN_FAILURES; i++) {
      const o = await recordEndpointAttempts(deps(), [attempt(endpoint, false, 500)]);
      raised.push(...o.raised);
      if (i < DISABLE_MIN_FAILURES - 1) now += (5 * DAY) / (DISABLE_MIN_FAILURES - 1);
    }
    expect(raised).toEqual(['webhook_endpoint.failing', 'webhook_endpoint.disabled']);
    const after = await store.read((tx) => tx.endpoints.get(scope.environmentId, endpoint.id));
    expect(after).toMatchObject({ active: false, disabledReason: 'failing', disabledAt: now, version: endpoint.version + 1, consecutiveFailures: DISABLE_MIN_FAILURES });
    expect((await deliveriesTo(scope.environmentId, endpoint.id)).items.map((d) => d.state)).toEqual(['disabled']);
    // To the alerting endpoint only: never the endpoint it is about, never an endpoint of every type.
    const alerts = (await deliveriesTo(scope.environmentId, alert.id)).items;
    const typeOf = async (eventId: string) => (await store.read((tx) => tx.events.get(scope.environmentId, eventId)))?.type;
    expect(await Promise.all(alerts.map((d) => typeOf(d.eventId)))).toEqual(['webhook_endpoint.disabled', 'webhook_endpoint.failing']);
    const toEverything = (await deliveriesTo(scope.environmentId, everything.id)).items;
    expect(await Promise.all(toEverything.map((d) => typeOf(d.eventId)))).toEqual(['order.created']);
    const feed = await store.read((tx) => tx.events.list(scope.environmentId, { types: ['webhook_endpoint.disabled'], limit: 10, cursor: null }));
    expect(JSON.parse(feed.items[0]!.payload)).toMatchObject({ type: 'webhook_endpoint.disabled', data: { endpointId: endpoint.id, environment: 'test', reason: 'failing', consecutiveFailures: DISABLE_MIN_FAILURES, lastStatusCode: 500 } });
    // A disabled endpoint stays disabled: later attempts (a stale lease) change nothing.
    expect(await recordEndpointAttempts(deps(), [attempt(endpoint, false, 410)])).toEqual({ disabled: [], raised: [] });
  });

  it('recovers at the first success after failing; attempts to an older version are ignored', async () => {
    const { scope, endpoint } = await seed();
    for (let i = 0; i < FAILING_AFTER; i++) await recordEndpointAttempts(deps(), [attempt(endpoint, false, null)]);
    expect(await recordEndpointAttempts(deps(), [attempt({ ...endpoint, version: 0 }, true, 200)])).toEqual({ disabled: [], raised: [] });
    expect(await recordEndpointAttempts(deps(), [attempt(endpoint, true, 200)])).toEqual({ disabled: [], raised: ['webhook_endpoint.recovered'] });
    expect(await store.read((tx) => tx.endpoints.get(scope.environmentId, endpoint.id))).toMatchObject({ active: true, failingSince: null, consecutiveFailures: 0, failingNotifiedAt: null });
  });
});
