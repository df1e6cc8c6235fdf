// The live event stream (GET /v2/events/stream) over real HTTP: what it carries and in which
// order, resumption by Last-Event-ID and by ?after=, the type filter, refusals before the
// stream starts, tenant and environment scoping, heartbeats, and its end when the server stops. Read with
// the package's own stream reader (client/cli/stream-reader.ts), as `listen` reads it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStream, StreamEnded, type StreamMessage } from '../../client/cli/stream-reader.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { buildApp } from '../app/build-app.ts';
import { expectProblem, keyOf, sendRaw } from '../testing/raw-http.ts';
import { allEvents, deposit, WITH_TOKEN, type Clients } from './testing/orders.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

interface Listener {
  /** The position the stream opened at. */
  position: string;
  /** The next n messages (waits for them). */
  take(n: number): Promise<StreamMessage[]>;
  close(): void;
  /** Rejects with StreamEnded when the server ends the stream. */
  ended: Promise<void>;
}

async function listenWith(creds: { apiKey: string; apiHash: string }, opts: { after?: string | null; types?: string[]; baseUrl?: string } = {}): Promise<Listener> {
  const stop = new AbortController();
  const opened = await openEventStream({
    connection: { baseUrl: opts.baseUrl ?? server.url, apiKey: creds.apiKey, apiSecret: creds.apiHash },
    after: opts.after ?? null,
    types: opts.types ?? [],
    signal: stop.signal,
    idleMs: 60_000,
  });
  if (!opened.ok) throw new Error(`stream refused: ${opened.status} ${JSON.stringify(opened.problem)}`);
  const received: StreamMessage[] = [];
  let notify = (): void => undefined;
  const ended = (async () => {
    for await (const m of opened.messages) {
      received.push(m);
      notify();
    }
  })();
  ended.catch(() => notify());
  return {
    position: opened.position,
    async take(n) {
      while (received.length < n) {
        await new Promise<void>((resolve) => (notify = resolve));
      }
      return received.splice(0, n);
    },
    close: () => stop.abort(),
    ended,
  };
}

const order = (c: Pick<Clients, 'orders'>, merchantReference: string) =>
  c.orders.POST('/v2/orders', { body: { ...WITH_TOKEN, merchantReference } }).then((r) => r.data!);

describe('GET /v2/events/stream', () => {
  it('streams new events as they commit, each the exact envelope of the feed, with a cursor id', async () => {
    const t = await server.newTenant();
    await order(t, 'before-the-stream');
    const l = await listenWith(t);
    try {
      const o = await order(t, 'cart-1');
      await deposit(t, o.orderId, WITH_TOKEN.amountBaseUnits!);
      const [created, paid] = await l.take(2);
      // Events recorded before the stream opened are not replayed without a cursor.
      expect([created!.event, paid!.event]).toEqual(['order.created', 'order.paid']);
      const feed = await allEvents(t);
      expect(JSON.parse(created!.data)).toEqual(feed.find((e) => e.type === 'order.created' && e.data.orderId === o.orderId));
      expect(JSON.parse(paid!.data)).toEqual(feed.find((e) => e.type === 'order.paid'));
      expect(created!.id).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(created!.id).not.toBe(paid!.id);
    } finally {
      l.close();
    }
  });

  it('resumes after Last-Event-ID, or ?after=, with every later event and none before', async () => {
    const t = await server.newTenant();
    const l = await listenWith(t);
    for (let i = 0; i < 5; i++) await order(t, `cart-${i}`);
    const five = await l.take(5);
    l.close();
    expect(five.map((m) => JSON.parse(m.data).data.merchantReference)).toEqual(['cart-0', 'cart-1', 'cart-2', 'cart-3', 'cart-4']);
    // Two more while nobody listens.
    await order(t, 'cart-5');
    await order(t, 'cart-6');
    const resumed = await listenWith(t, { after: five[2]!.id });
    const rest = await resumed.take(4);
    resumed.close();
    expect(rest.map((m) => JSON.parse(m.data).data.merchantReference)).toEqual(['cart-3', 'cart-4', 'cart-5', 'cart-6']);
    expect(rest.slice(0, 2).map((m) => m.id)).toEqual([five[3]!.id, five[4]!.id]);

    const res = await fetch(`${server.url}/v2/events/stream?after=${rest[2]!.id}`, { headers: { 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('cart-6')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toContain(`id: ${rest[3]!.id}\nevent: order.created\ndata: {`);
    expect(text).not.toContain('cart-5');
  });

  it('opens with its position: resuming from it before any event came misses nothing recorded since', async () => {
    const t = await server.newTenant();
    await order(t, 'before-the-opening');
    const first = await listenWith(t);
    first.close();
    // Recorded while nobody listens, before the first stream carried any event.
    await order(t, 'while-away');
    const resumed = await listenWith(t, { after: first.position });
    try {
      // Resuming, the opening is the cursor sent.
      expect(resumed.position).toBe(first.position);
      const [m] = await resumed.take(1);
      expect(JSON.parse(m!.data).data.merchantReference).toBe('while-away');
    } finally {
      resumed.close();
    }
  });

  it('keeps only the types asked for', async () => {
    const t = await server.newTenant();
    const l = await listenWith(t, { types: ['order.paid', 'webhook.test'] });
    try {
      const o = await order(t, 'cart-filter');
      await deposit(t, o.orderId, WITH_TOKEN.amountBaseUnits!);
      const test = await t.sandbox.POST('/sandbox/events/test');
      expect(test.response.status).toBe(201);
      const got = await l.take(2);
      expect(got.map((m) => m.event)).toEqual(['order.paid', 'webhook.test']);
      expect(JSON.parse(got[1]!.data)).toEqual(test.data);
    } finally {
      l.close();
    }
  });

  it('carries only the events of the key’s tenant environment', async () => {
    const t = await server.newTenant();
    const other = await server.newTenant();
    const live = await server.keyWith(t, ['orders_read', 'orders_write'], 'live');
    const l = await listenWith(t);
    const liveListener = await listenWith(live);
    try {
      await order(other, 'other-tenant');
      await order(live, 'live-env');
      await order(t, 'mine');
      const [mine] = await l.take(1);
      expect(JSON.parse(mine!.data).data.merchantReference).toBe('mine');
      const [fromLive] = await liveListener.take(1);
      expect(JSON.parse(fromLive!.data).data.merchantReference).toBe('live-env');
      // Marker: anything of another tenant would have come before it.
      await order(t, 'marker');
      const [next] = await l.take(1);
      expect(JSON.parse(next!.data).data.merchantReference).toBe('marker');
    } finally {
      l.close();
      liveListener.close();
    }
  });

  it('refuses before streaming: bad credentials 401, no orders_read 403, a foreign cursor or type 400', async () => {
    const t = await server.newTenant();
    expectProblem(await sendRaw(server.url, null, 'GET', '/v2/events/stream'), 401, 'unauthenticated');
    expectProblem(await sendRaw(server.url, { apiKey: t.apiKey, apiHash: 'wrong' }, 'GET', '/v2/events/stream'), 401, 'unauthenticated');
    const writer = await server.keyWith(t, ['orders_write']);
    expectProblem(await sendRaw(server.url, keyOf(writer), 'GET', '/v2/events/stream'), 403, 'permission-denied');
    const badHeader = await sendRaw(server.url, keyOf(t), 'GET', '/v2/events/stream', { headers: { 'last-event-id': 'bm90LWEtY3Vyc29y' } });
    expectProblem(badHeader, 400, 'validation-failed');
    expect(badHeader.body.errors).toEqual([{ pointer: '/header/last-event-id', detail: 'is not a valid cursor' }]);
    const badQuery = await sendRaw(server.url, keyOf(t), 'GET', '/v2/events/stream?after=MTIz');
    expectProblem(badQuery, 400, 'validation-failed');
    expect(badQuery.body.errors).toEqual([{ pointer: '/query/after', detail: 'is not a valid cursor' }]);
    expectProblem(await sendRaw(server.url, keyOf(t), 'GET', '/v2/events/stream?types=payout.completed'), 400, 'validation-failed');
  });

  it('the sandbox test event needs a test key', async () => {
    const t = await server.newTenant();
    const live = await server.keyWith(t, ['orders_write'], 'live');
    expectProblem(await sendRaw(server.url, keyOf(live), 'POST', '/sandbox/events/test'), 403, 'live-key-not-allowed');
  });

  it('sends a heartbeat comment while nothing else is written', async () => {
    const own = await startTestServer({ build: (services, config) => buildApp(services, config, { streams: { heartbeatMs: 20 } }) });
    try {
      const t = await own.newTenant();
      const res = await fetch(`${own.url}/v2/events/stream`, { headers: { 'x-api-key': t.apiKey, 'x-api-hash': t.apiHash } });
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes(': heartbeat\n\n')) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      // The opening: the position "now", a cursor the stream takes back.
      const opening = /^: connected\nid: ([A-Za-z0-9_-]+)\n\n/.exec(text);
      expect(opening).not.toBeNull();
      expect(text).not.toContain('data:');
    } finally {
      await own.close();
    }
  });

  it('ends open streams when the server stops, so the stop does not wait for them', async () => {
    const own = await startTestServer();
    const t = await own.newTenant();
    const l = await listenWith(t, { baseUrl: own.url });
    await own.close();
    await expect(l.ended).rejects.toBeInstanceOf(StreamEnded);
  });
});
