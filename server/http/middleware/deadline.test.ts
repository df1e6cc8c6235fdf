import { Hono, type Context } from 'hono';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../delivery/testing.ts';
import type { CallOptions, Store } from '../../domain/store.ts';
import type { AppEnv } from '../app-env.ts';
import { problemErrorHandler } from '../errors.ts';
import { requestDeadline } from './deadline.ts';

function appWith(timers: FakeTimers, handler: (c: Context<AppEnv>) => Promise<Response>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(problemErrorHandler(pino({ level: 'silent' })));
  app.on(['GET', 'POST'], '/x', requestDeadline(6_000, timers), handler);
  return app;
}

const never = (): Promise<Response> => new Promise<Response>(() => undefined);

/** A store whose writes never finish, as the request's handler sees it; `seen` gets each call's signal. */
function hangingStore(seen: AbortSignal[]): Store {
  const hang = (o?: CallOptions): Promise<never> => {
    if (o?.signal) seen.push(o.signal);
    return new Promise<never>(() => undefined);
  };
  return { transaction: (_fn: unknown, o?: CallOptions) => hang(o), createOrder: (_c: unknown, o?: CallOptions) => hang(o) } as unknown as Store;
}

/** A handler that makes one write through the request's store, which never answers. */
const writesForever =
  (seen: AbortSignal[]) =>
  (c: Context<AppEnv>): Promise<Response> =>
    c.get('storeCalls')!.wrap(hangingStore(seen)).transaction(async () => new Response('never'));

describe('request deadline', () => {
  it('answers a read that has not finished by the deadline 503 store-unavailable, a write that may be stored 504 outcome-unknown', async () => {
    const timers = new FakeTimers();
    const seen: AbortSignal[] = [];
    const app = appWith(timers, writesForever(seen));
    const read = app.request('/x');
    const write = app.request('/x', { method: 'POST' });
    await new Promise((r) => setImmediate(r));
    expect(timers.delays()).toEqual([6_000, 6_000]);
    timers.fireAll();
    const [r, w] = await Promise.all([read, write]);
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    expect(await r.json()).toMatchObject({ type: 'https://errors.payments.example/store-unavailable' });
    expect(w.status).toBe(504);
    expect(w.headers.get('retry-after')).toBe('2');
    expect(await w.json()).toMatchObject({ type: 'https://errors.payments.example/outcome-unknown' });
    // Every store call of both requests was told that nobody waits for it any more.
    expect(seen.map((signal) => signal.aborted)).toEqual([true, true]);
  });

  it('answers a write none of whose store writes may have gone in 503 store-unavailable: nothing to settle', async () => {
    const timers = new FakeTimers();
    const app = appWith(timers, never);
    const write = app.request('/x', { method: 'POST' });
    await new Promise((r) => setImmediate(r));
    timers.fireAll();
    const w = await write;
    expect(w.status).toBe(503);
    expect(await w.json()).toMatchObject({ type: 'https://errors.payments.example/store-unavailable' });
  });

  it('aborts the store calls of a request whose client went away', async () => {
    const timers = new FakeTimers();
    const seen: AbortSignal[] = [];
    const app = appWith(timers, writesForever(seen));
    const client = new AbortController();
    void Promise.resolve(app.request(new Request('http://localhost/x', { method: 'POST', signal: client.signal }))).catch(() => undefined);
    await new Promise((r) => setImmediate(r));
    expect(seen.map((signal) => signal.aborted)).toEqual([false]);
    client.abort();
    expect(seen.map((signal) => signal.aborted)).toEqual([true]);
    timers.fireAll();
  });

  it("leaves an answer in time untouched, and its timer cleared", async () => {
    const timers = new FakeTimers();
    const app = appWith(timers, async () => new Response('ok', { status: 201 }));
    const res = await app.request('/x', { method: 'POST' });
    expect(res.status).toBe(201);
    expect(timers.delays()).toEqual([]);
  });

  // Hono answers an Error thrown by a handler itself (onError), so next() resolves; anything
  // else thrown (a driver's plain object, say) rejects next() through the middleware.
  it('clears its timer when the handler throws something that is not an Error', async () => {
    const timers = new FakeTimers();
    const app = appWith(timers, () => Promise.reject({ code: 'EWHATEVER' }));
    await expect(app.request('/x')).rejects.toEqual({ code: 'EWHATEVER' });
    expect(timers.delays()).toEqual([]);
  });
});
