// What the metrics add to the store and the requests. That observeStore forwards every call
// with its options is the decorators' one contract (domain/store-decorator.test.ts); here: a
// write is timed by its outcome, a read is not a commit; and the request metrics, kept children
// of our own (kept-histogram.ts), expose what prom-client's counter and histogram would.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Store } from '../domain/store.ts';
import { systemClock } from '../domain/clock.ts';
import { createMetrics, observeStore } from './metrics.ts';

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
  it('expose what prom-client’s own counter and histogram would, observed the same', async () => {
    const metrics = createMetrics({ clock: systemClock, defaultMetrics: false });
    const reference = new Registry();
    const labelNames = ['operation', 'method', 'status'] as const;
    const count = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by contract operation, method and status code.', labelNames, registers: [reference] });
    const seconds = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to its answer, by contract operation, method and status code.',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [reference],
    });
    const observed: Array<[string, string, number, number]> = [
      ['listUserTransactions', 'GET', 200, 0.002],
      ['listUserTransactions', 'GET', 200, 0.0004],
      ['listUserTransactions', 'GET', 200, 0.01],
      ['listUserTransactions', 'GET', 503, 6],
      ['createPayout', 'POST', 201, 42],
    ];
    for (const [operation, method, status, s] of observed) {
      metrics.request(operation, method, status, s);
      const labels = { operation, method, status: String(status) };
      count.inc(labels);
      seconds.observe(labels, s);
    }
    const ours = (await metrics.render()).split('\n').filter((l) => /^(# (HELP|TYPE) )?http_request/.test(l));
    expect(ours).toEqual((await reference.metrics()).split('\n').filter((l) => l !== ''));
    expect(sample(await metrics.render(), 'http_requests_total{operation="listUserTransactions",method="GET",status="200"}')).toBe(3);
  });
});
