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

function setup(memory?: number) {
  let now = 1_000;
  const written: EndpointAttempt[][] = [];
  const health = createEndpointHealth({
    timers: new FakeTimers(),
    clock: { now: () => now },
    log: captureLogger().log,
    holdMs: 30_000,
    ...(memory === undefined ? {} : { memory }),
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

it('remembers at most `memory` suspects: past it they are forgotten at once, and a forgotten one’s success is not handed on', async () => {
  const { health, written } = setup(2);
  const lease = (id: string) => toLease(claimedDelivery({ endpointId: id }));
  for (const id of ['ep_1', 'ep_2', 'ep_3']) health.observe(lease(id), result(500));
  await health.idle();
  expect(written.flat()).toHaveLength(3);
  // ep_3 came in past the bound: ep_1 and ep_2 were forgotten, ep_3 is remembered.
  health.observe(lease('ep_1'), result(200));
  health.observe(lease('ep_3'), result(200));
  await health.idle();
  expect(written.flat().slice(3).map((a) => [a.endpointId, a.success])).toEqual([['ep_3', true]]);
});
