import { getEventListeners } from 'node:events';
import { Hono, type Context } from 'hono';
import { pino, type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { until } from '../../../testing/until.ts';
import { FakeTimers } from '../../delivery/testing.ts';
import type { CallOptions, Store } from '../../domain/store.ts';
import { CallCancelled } from '../../domain/store-errors.ts';
import type { AppEnv } from '../app-env.ts';
import { problemErrorHandler } from '../errors.ts';
import { requestDeadline } from './deadline.ts';

/** The app under test; `failures` gets every error its error handler was given. */
function appWith(timers: FakeTimers, handler: (c: Context<AppEnv>) => Promise<Response>, log: Logger = pino({ level: 'silent' }), failures: unknown[] = []): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const onError = problemErrorHandler(log);
  app.onError((err, c) => {
    failures.push(err);
    return onError(err, c);
  });
  app.on(['GET', 'POST'], '/x', requestDeadline(6_000, timers), handler);
  return app;
}

/** A logger whose every line lands in `lines`. */
function recordingLog(lines: Array<{ msg: string }>): Logger {
  return pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
}

/** A store whose writes wait until their signal is aborted, then fail unwritten, as a queued call of the real stores does. */
function cancellingStore(): Store {
  const write = (o?: CallOptions): Promise<never> =>
    new Promise<never>((_resolve, reject) => o?.signal?.addEventListener('abort', () => reject(new CallCancelled()), { once: true }));
  return { transaction: (_fn: unknown, o?: CallOptions) => write(o), createOrder: (_c: unknown, o?: CallOptions) => write(o) } as unknown as Store;
}

/** A handler that makes one write through the request's store, which fails unwritten once the request's signal is aborted. */
const writesUntilCancelled = (c: Context<AppEnv>): Promise<Response> => c.get('storeCalls')!.wrap(cancellingStore()).transaction(async () => new Response('never'));

const abortListeners = (request: Request): number => getEventListeners(request.signal, 'abort').length;

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

  it('aborts the store calls of a request whose client went away, answers 503 and stops listening to the client', async () => {
    const timers = new FakeTimers();
    const seen: AbortSignal[] = [];
    const app = appWith(timers, async (c) => {
      const calls = c.get('storeCalls')!;
      // The handler's store: one call that waits forever (recorded), one that fails once cancelled.
      void calls.wrap(hangingStore(seen)).transaction(async () => undefined);
      return calls.wrap(cancellingStore()).createOrder({} as never) as unknown as Response;
    });
    const client = new AbortController();
    const request = new Request('http://localhost/x', { method: 'POST', signal: client.signal });
    const answer = Promise.resolve(app.request(request));
    await until(() => seen.length === 1, 'the handler made its store calls');
    expect(seen.map((signal) => signal.aborted)).toEqual([false]);
    expect(abortListeners(request)).toBe(1);
    client.abort();
    expect(seen.map((signal) => signal.aborted)).toEqual([true]);
    const res = await answer;
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ type: 'https://errors.payments.example/store-unavailable' });
    expect(abortListeners(request)).toBe(0);
    // Answered by the handler itself: the deadline's timer is gone with it.
    expect(timers.delays()).toEqual([]);
  });

  it('stops listening to the client once a request that used the store is answered, and listens not at all to one that did not', async () => {
    const timers = new FakeTimers();
    const app = appWith(timers, async (c) => {
      if (c.req.method === 'POST') await c.get('storeCalls')!.wrap({ transaction: async () => undefined } as unknown as Store).transaction(async () => undefined);
      return new Response('ok');
    });
    const client = new AbortController();
    const used = new Request('http://localhost/x', { method: 'POST', signal: client.signal });
    const unused = new Request('http://localhost/x', { signal: client.signal });
    const before = abortListeners(used);
    expect((await app.request(used)).status).toBe(200);
    expect((await app.request(unused)).status).toBe(200);
    expect([abortListeners(used) - before, abortListeners(unused)]).toEqual([0, 0]);
  });

  it('logs one line for each request its deadline answered, however its abandoned handler ends', async () => {
    const timers = new FakeTimers();
    const lines: Array<{ msg: string }> = [];
    const failures: unknown[] = [];
    let later: (err: unknown) => void = () => undefined;
    const app = appWith(
      timers,
      async (c) => {
        // The write: its store call is dropped at the deadline's abort, and it fails while the deadline answers.
        if (c.req.method === 'POST') return writesUntilCancelled(c);
        // The read: it fails after its answer went out, with a store that cannot serve.
        return new Promise<Response>((_resolve, reject) => (later = reject));
      },
      recordingLog(lines),
      failures,
    );
    const write = app.request('/x', { method: 'POST' });
    const read = app.request('/x');
    await until(() => timers.delays().length === 2, 'both deadlines are armed');
    timers.fireAll();
    expect([(await write).status, (await read).status]).toEqual([503, 503]);
    later(Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }));
    await until(() => failures.length === 4, 'each abandoned handler’s failure reached the error handler');
    expect(failures.filter((err) => err instanceof CallCancelled)).toHaveLength(1);
    expect(lines.map((l) => l.msg)).toEqual(['request failed', 'request failed']);
  });

  it('still logs a bug of the abandoned handler', async () => {
    const timers = new FakeTimers();
    const lines: Array<{ msg: string }> = [];
    const failures: unknown[] = [];
    let later: (err: unknown) => void = () => undefined;
    const app = appWith(timers, () => new Promise<Response>((_resolve, reject) => (later = reject)), recordingLog(lines), failures);
    const read = app.request('/x');
    await until(() => timers.delays().length === 1, 'the deadline is armed');
    timers.fireAll();
    expect((await read).status).toBe(503);
    later(new TypeError('x is undefined'));
    await until(() => failures.length === 2, 'the abandoned handler’s failure reached the error handler');
    expect(lines.map((l) => l.msg)).toEqual(['request failed', 'unhandled error after the request deadline answered']);
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
