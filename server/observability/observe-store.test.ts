// observeStore wraps the store for the operator's metrics: it must pass each call's options
// through, or a request answered at its deadline goes on writing (its signal never reaches the
// store) and a 503 "nothing was written" can be untrue.
import { describe, expect, it } from 'vitest';
import type { CallOptions, Store } from '../domain/store.ts';
import { systemClock } from '../domain/clock.ts';
import { createMetrics, observeStore } from './metrics.ts';

describe('observeStore', () => {
  it('passes the call options (the request’s signal) of reads, transactions and order creations to the store', async () => {
    const seen: Array<[string, CallOptions | undefined]> = [];
    const inner = {
      read: async (_fn: unknown, opts?: CallOptions) => void seen.push(['read', opts]),
      transaction: async (_fn: unknown, opts?: CallOptions) => void seen.push(['transaction', opts]),
      createOrder: async (_c: unknown, opts?: CallOptions) => (seen.push(['createOrder', opts]), { created: true }),
    } as unknown as Store;
    const store = observeStore(inner, createMetrics({ clock: systemClock }));
    const opts = { signal: new AbortController().signal };
    await store.read(async () => undefined, opts);
    await store.transaction(async () => undefined, opts);
    await store.createOrder({} as never, opts);
    expect(seen).toEqual([
      ['read', opts],
      ['transaction', opts],
      ['createOrder', opts],
    ]);
  });
});
