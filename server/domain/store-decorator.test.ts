// One contract over every Store decorator: given a base store that records its calls, each
// decorator forwards every member of the Store port to it, each call with all its arguments
// (the CallOptions among them, or options that carry the caller's signal), and hands back what
// the base returned. A decorator that drops an argument fails here; TypeScript cannot see it.
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { StoreCalls } from '../http/store-calls.ts';
import { createMetrics, observeStore } from '../observability/metrics.ts';
import { traceStore } from '../observability/tracing/store.ts';
import { systemClock } from './clock.ts';
import type { CallOptions, DeliveryQueue, Store } from './store.ts';
import { StoreDecorator } from './store-decorator.ts';

type Call = { member: keyof Store; args: unknown[] };

/** A base store whose every method records its arguments and returns a token of its own. */
function recordingStore(): { store: Store; calls: Call[]; queue: DeliveryQueue; returned: Map<keyof Store, unknown> } {
  const calls: Call[] = [];
  const queue = {} as DeliveryQueue;
  const returned = new Map<keyof Store, unknown>();
  const method =
    (member: keyof Store, async: boolean) =>
    (...args: unknown[]): unknown => {
      calls.push({ member, args });
      const token = { from: member };
      returned.set(member, token);
      return async ? Promise.resolve(token) : token;
    };
  const store: Store = {
    kind: 'postgres',
    queue,
    migrate: method('migrate', true) as Store['migrate'],
    transaction: method('transaction', true) as Store['transaction'],
    read: method('read', true) as Store['read'],
    createOrder: method('createOrder', true) as Store['createOrder'],
    createPayout: method('createPayout', true) as Store['createPayout'],
    transactionsVersion: method('transactionsVersion', false) as Store['transactionsVersion'],
    onDeliveriesReady: method('onDeliveriesReady', false) as Store['onDeliveriesReady'],
    onEventsRecorded: method('onEventsRecorded', false) as Store['onEventsRecorded'],
    prune: method('prune', true) as Store['prune'],
    close: method('close', true) as Store['close'],
  };
  return { store, calls, queue, returned };
}

/** Every decorator of the server, each around `base`. */
const DECORATORS: Record<string, (base: Store) => Store> = {
  StoreDecorator: (base) => new StoreDecorator(base),
  observeStore: (base) => observeStore(base, createMetrics({ clock: systemClock, defaultMetrics: false })),
  // Outside a live span, as the delivery queue's and the streams' calls are (tracing/store.test.ts traces inside one).
  traceStore: (base) => traceStore(base, trace.getTracer('store-decorator.test')),
  'StoreCalls of a write request': (base) => new StoreCalls(new Request('http://localhost/x', { method: 'POST' }), true).wrap(base),
  'StoreCalls of a read request': (base) => new StoreCalls(new Request('http://localhost/x'), false).wrap(base),
};

/**
 * The arguments each member is called with (null: a property), fresh objects each time so that
 * each can be found again; `signal` is the caller's. A member added to the port must be added
 * here (the type says so).
 */
const fn = async (): Promise<undefined> => undefined;
const listener = (): void => undefined;
const argsOf = (signal: AbortSignal): { [K in keyof Store]: unknown[] | null } => ({
  kind: null,
  queue: null,
  migrate: [],
  transaction: [fn, { signal }],
  read: [fn, { signal }],
  createOrder: [{ environmentId: 'env' }, { signal }],
  createPayout: [{ walletDelta: '-1' }, { signal }],
  transactionsVersion: ['env'],
  onDeliveriesReady: [listener],
  onEventsRecorded: [listener],
  prune: [{ now: 1 }],
  close: [],
});
const MEMBERS = Object.keys(argsOf(new AbortController().signal)) as Array<keyof Store>;

describe.each(Object.entries(DECORATORS))('%s', (_name, decorate) => {
  it.each(MEMBERS.filter((m) => argsOf(new AbortController().signal)[m] !== null))(
    'forwards %s with all its arguments (call options: carrying the caller’s signal) and returns what the store returned',
    async (member) => {
      const caller = new AbortController();
      const args = argsOf(caller.signal)[member]!;
      const { store, calls, returned } = recordingStore();
      const result = await (decorate(store)[member] as (...a: unknown[]) => unknown)(...args);
      expect(calls.map((c) => c.member)).toEqual([member]);
      const forwarded = calls[0]!.args;
      expect(forwarded).toHaveLength(args.length);
      for (const [i, arg] of args.entries()) {
        if (!isOptions(arg)) {
          expect(forwarded[i], `argument ${i}`).toBe(arg);
          continue;
        }
        const given = forwarded[i];
        expect(isOptions(given) && given.signal?.aborted, 'the store’s signal before the caller gives up').toBe(false);
        caller.abort(new Error('the caller gave up'));
        expect(isOptions(given) && given.signal?.aborted, 'the store’s signal once the caller gave up').toBe(true);
      }
      expect(result).toBe(returned.get(member));
    },
  );

  it('passes its kind and its queue through', () => {
    const { store, queue } = recordingStore();
    const decorated = decorate(store);
    expect(decorated.kind).toBe('postgres');
    expect(decorated.queue).toBe(queue);
  });
});

function isOptions(arg: unknown): arg is CallOptions {
  return typeof arg === 'object' && arg !== null && 'signal' in arg;
}
