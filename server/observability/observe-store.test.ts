// What the metrics add to the store and the requests. That observeStore forwards every call
// with its options is the decorators' one contract (domain/store-decorator.test.ts); here: a
// write is timed by its outcome, a read is not a commit; and each request's metric children are
// looked up by their labels once, not on every observation (prom-client hashes the labels).
import { Counter, Histogram } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Store } from '../domain/store.ts';
import { systemClock } from '../domain/clock.ts';
import { createMetrics, observeStore } from './metrics.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The value of one sample of the exposition, or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('observeStore', () => {
  it('times transactions and order creations by their outcome; reads are not commits', async () => {
    const metrics = createMetrics({ clock: systemClock, defaultMetrics: false });
    const inner = {
      read: async () => 'read',
      transaction: async () => 'written',
      createOrder: async () => Promise.reject(new Error('refused')),
    } as unknown as Store;
    const store = observeStore(inner, metrics);
    await store.read(async () => undefined);
    await store.transaction(async () => undefined);
    await expect(store.createOrder({} as never)).rejects.toThrow('refused');
    const text = await metrics.render();
    expect(sample(text, 'store_transaction_duration_seconds_count{outcome="commit"}')).toBe(1);
    expect(sample(text, 'store_transaction_duration_seconds_count{outcome="rollback"}')).toBe(1);
  });
});

describe('request metrics', () => {
  it('looks each label set’s children up once, and counts every observation', async () => {
    const metrics = createMetrics({ clock: systemClock, defaultMetrics: false });
    const counterLabels = vi.spyOn(Counter.prototype, 'labels');
    const histogramLabels = vi.spyOn(Histogram.prototype, 'labels');
    for (let i = 0; i < 3; i++) metrics.request('listUserTransactions', 'GET', 200, 0.002);
    metrics.request('listUserTransactions', 'GET', 503, 0.002);
    metrics.request('createPayout', 'POST', 200, 0.002);
    expect([counterLabels.mock.calls.length, histogramLabels.mock.calls.length]).toEqual([3, 3]);
    const text = await metrics.render();
    expect(sample(text, 'http_requests_total{operation="listUserTransactions",method="GET",status="200"}')).toBe(3);
    expect(sample(text, 'http_requests_total{operation="listUserTransactions",method="GET",status="503"}')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count{operation="createPayout",method="POST",status="200"}')).toBe(1);
  });
});
