// The worker's endpoint-health part under a fake clock, without a store: what it hands on (a
// healthy endpoint's success: nothing), and how long a 410 holds its destination back.
import { expect, it } from 'vitest';
import type { EndpointAttempt } from '../../domain/endpoints/health.ts';
import type { AttemptResult } from '../../domain/store.ts';
import { captureLogger, claimedDelivery, FakeTimers } from '../testing.ts';
import { createEndpointHealth } from './endpoint-health.ts';
import { toLease } from './lease.ts';

function result(statusCode: number | null, startedAt = 1_000): AttemptResult {
  const success = statusCode !== null && statusCode < 300;
  const attempt = { deliveryId: 'd', cycle: 1, number: 1, startedAt, durationMs: 5, signatureTimestamp: 1, outcome: 'response' as const, statusCode, errorClass: null, responseBody: null, success };
  return { attempt, state: success ? 'delivered' : 'pending', nextAttemptAt: null, deliveredAt: null };
}

function setup() {
  let now = 1_000;
  const written: EndpointAttempt[][] = [];
  const health = createEndpointHealth({
    timers: new FakeTimers(),
    clock: { now: () => now },
    log: captureLogger().log,
    holdMs: 30_000,
    record: async (a) => {
      written.push([...a]);
      return { disabled: [], raised: [] };
    },
  });
  return { health, written, advance: (ms: number) => (now += ms) };
}

it('hands on failures and the success that ends a run, never a healthy endpoint’s success', async () => {
  const { health, written } = setup();
  const healthy = toLease(claimedDelivery({ endpointId: 'ep_ok' }));
  health.observe(healthy, result(200));
  await health.idle();
  expect(written).toEqual([]);
  const failing = toLease(claimedDelivery({ endpointId: 'ep_bad' }));
  health.observe(failing, result(503));
  health.observe(failing, result(200, 2_000));
  await health.idle();
  expect(written.flat().map((a) => [a.endpointId, a.success, a.statusCode])).toEqual([
    ['ep_bad', false, 503],
    ['ep_bad', true, 200],
  ]);
  // Claimed while another instance had counted failures: its success ends that run here too.
  health.observe({ ...healthy, endpointFailures: 3 }, result(200));
  await health.idle();
  expect(written.flat()).toHaveLength(3);
  // A payout callback has no endpoint: nothing.
  health.observe(toLease(claimedDelivery({ endpointId: null })), result(500));
  await health.idle();
  expect(written.flat()).toHaveLength(3);
});

it('holds a destination that answered 410 back for holdMs (its prefetched leases cannot outlive it), then lets it go', () => {
  const { health, advance } = setup();
  const lease = toLease(claimedDelivery({ endpointId: 'ep_gone' }));
  expect(health.gone(lease.dest)).toBe(false);
  health.answered(lease, result(410));
  expect(health.gone(lease.dest)).toBe(true);
  expect(health.gone(toLease(claimedDelivery({ endpointId: 'ep_other' })).dest)).toBe(false);
  advance(29_999);
  expect(health.gone(lease.dest)).toBe(true);
  advance(1);
  expect(health.gone(lease.dest)).toBe(false);
});
