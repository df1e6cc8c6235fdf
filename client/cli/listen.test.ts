// `listen` against a stand-in service on loopback (real HTTP, real files), to drive what the
// real server rarely does: a stream that drops at once, one that goes silent, a saved cursor it
// refuses. The back-off waits go through the injected sleep, so nothing here waits for them.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ListenArgs } from './args.ts';
import { listen } from './listen.ts';
import { until } from '../../testing/until.ts';

type Stream = (req: IncomingMessage, res: ServerResponse, connection: number) => void;

let dir: string;
let servers: Server[] = [];
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'listen-cli-'));
});
afterEach(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  servers = [];
  await rm(dir, { recursive: true, force: true });
});

/** A service whose wallet accepts the key and whose stream does what `stream` says. */
async function service(stream: Stream): Promise<string> {
  let connections = 0;
  const server = createServer((req, res) => {
    if (req.url === '/sandbox/wallet') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"environment":"test","balance":"1"}');
    stream(req, res, ++connections);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Runs listen until `done` says so from its output; the back-off waits are recorded, not waited. */
/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function run(
  baseUrl: string,
  done: (lines: string[]) => boolean,
  opts: { idleMs?: number; port?: number; onWait?: (ms: number) => Promise<void> } = {},
): Promise<{ lines: string[]; waits: number[] }> {
  const lines: string[] = [];
  const waits: number[] = [];
  const stop = new AbortController();
  const note = (line: string): void => {
    lines.push(line);
    if (done(lines)) stop.abort();
  };
  const args: ListenArgs = {
    command: 'listen',
    baseUrl,
    apiKey: 'pk_test_x',
    apiSecret: 's',
    routes: { fallback: `http://127.0.0.1:${opts.port ?? (await closedPort())}/webhooks`, byType: {} },
    events: [],
    secret: null,
    statePath: path.join(dir, 'state.json'),
    printSecret: false,
  };
  await listen(args, stop.signal, {
    output: { out: note, err: note },
    now: Date.now,
    env: {},
    sleep: async (ms) => {
      waits.push(ms);
      await opts.onWait?.(ms);
    },
    ...(opts.idleMs !== undefined ? { idleMs: opts.idleMs } : {}),
  });
  return { lines, waits };
}

const sse = (res: ServerResponse): ServerResponse => res.writeHead(200, { 'content-type': 'text/event-stream' });

it('prints every lost connection and reconnects with a growing back-off, reset once a connection held', async () => {
  const url = await service((_req, res, n) => {
    // Three refusals of the stream (503), then a connection that drops after its first line.
    if (n <= 3) return res.writeHead(503, { 'content-type': 'application/problem+json' }).end('{"type":"https://errors.payments.example/store-unavailable"}');
    sse(res).end(': connected\nid: MC4w\n\n');
  });
  const { lines, waits } = await run(url, (l) => l.filter((x) => x.includes('reconnecting')).length === 5);
  expect(waits).toEqual([500, 1000, 2000, 500, 500]);
  expect(lines.filter((l) => l.includes('reconnecting'))).toEqual([
    'the service answered 503; reconnecting in 0.5 s (attempt 1)',
    'the service answered 503; reconnecting in 1.0 s (attempt 2)',
    'the service answered 503; reconnecting in 2.0 s (attempt 3)',
    'the server closed the stream; reconnecting in 0.5 s (attempt 1)',
    'the server closed the stream; reconnecting in 0.5 s (attempt 1)',
  ]);
  expect(lines).toContain('Reconnected.');
  expect(lines.at(-1)).toBe('Stopped.');
});

it('takes a silent connection for a dropped one', async () => {
  const url = await service((_req, res) => void sse(res).write(': connected\nid: MC4w\n\n'));
  const { lines } = await run(url, (l) => l.some((x) => x.includes('reconnecting')), { idleMs: 50 });
  expect(lines.find((l) => l.includes('reconnecting'))).toBe('no data for 50 ms; reconnecting in 0.5 s (attempt 1)');
});

it('starts from now when the service refuses the saved cursor, and keeps the cursor of each forwarded event', async () => {
  const seen: Array<string | undefined> = [];
  const url = await service((req, res, n) => {
    seen.push(req.headers['last-event-id'] as string | undefined);
    if (n === 1) {
      return res.writeHead(400, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ type: 'https://errors.payments.example/validation-failed', detail: '/header/last-event-id is not a cursor issued by GET /v2/events/stream.' }));
    }
    const data = JSON.stringify({ id: 'e'.repeat(64), type: 'webhook.test', apiVersion: 'v2', createdAt: '2026-11-25T14:00:00.000Z', data: { environment: 'test' } });
    sse(res).write(`: connected\nid: MC4x\n\nid: MC4y\nevent: webhook.test\ndata: ${data}\n\n`);
  });
  const { writeFile } = await import('node:fs/promises');
  await writeFile(path.join(dir, 'state.json'), JSON.stringify({ cursor: 'b2xk', secret: null }));
  const { lines, waits } = await run(url, (l) => l.some((x) => x.includes('webhook.test')));
  expect(seen).toEqual(['b2xk', undefined]);
  expect(lines).toContain('The saved cursor was not accepted by this service: starting from now.');
  // The receiver cannot be reached: tried five times with back-off, printed, and the cursor still moves on.
  expect(waits).toEqual([500, 1000, 2000, 4000]);
  expect(lines.filter((l) => l.includes('trying again')).map((l) => l.replace(/\[\d+ ms\]/, ''))).toEqual([
    '  eeeeeeee -> failed (ECONNREFUSED); trying again in 0.5 s (try 2 of 5)',
    '  eeeeeeee -> failed (ECONNREFUSED); trying again in 1.0 s (try 3 of 5)',
    '  eeeeeeee -> failed (ECONNREFUSED); trying again in 2.0 s (try 4 of 5)',
    '  eeeeeeee -> failed (ECONNREFUSED); trying again in 4.0 s (try 5 of 5)',
  ]);
  const line = lines.find((l) => l.includes('webhook.test'))!;
  expect(line).toMatch(/^\d\d:\d\d:\d\d  webhook\.test\s+eeeeeeee  -\s+-> failed \(ECONNREFUSED\) \[\d+ ms\]$/);
  expect(line.length).toBeLessThan(100);
  const state = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8')) as { cursor: string; secret: string };
  expect(state.cursor).toBe('MC4y');
  expect(state.secret).toMatch(/^whsec_/);
});

const TEST_EVENT = JSON.stringify({ id: 'f'.repeat(64), type: 'webhook.test', apiVersion: 'v2', createdAt: '2026-11-25T14:00:00.000Z', data: { environment: 'test' } });

it('a receiver down, then back during the back-off: the event arrives on the next try', async () => {
  const url = await service((_req, res) => void sse(res).write(`: connected\nid: MC4x\n\nid: MC4y\nevent: webhook.test\ndata: ${TEST_EVENT}\n\n`));
  const port = await closedPort();
  const bodies: string[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(204).end();
    });
  });
  servers.push(receiver);
  // The receiver comes back while listen waits before its second try.
  const onWait = (): Promise<void> => (receiver.listening ? Promise.resolve() : new Promise((resolve) => receiver.listen(port, '127.0.0.1', resolve)));
  const { lines, waits } = await run(url, (l) => l.some((x) => x.includes('webhook.test')), { port, onWait });
  expect(waits).toEqual([500]);
  expect(lines.filter((l) => l.includes('trying again'))).toEqual(['  ffffffff -> failed (ECONNREFUSED); trying again in 0.5 s (try 2 of 5)']);
  expect(lines.find((l) => l.includes('webhook.test'))).toMatch(/webhook\.test\s+ffffffff  -\s+-> 204 \[\d+ ms\]$/);
  expect(bodies).toEqual([TEST_EVENT]);
  const state = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8')) as { events: Array<{ id: string; status: number; body: string }> };
  expect(state.events).toEqual([{ id: 'f'.repeat(64), type: 'webhook.test', body: TEST_EVENT, url: `http://127.0.0.1:${port}/webhooks`, status: 204 }]);
});

it('a stream refused with 403: the error, no Ready!, no state file', async () => {
  const url = await service((_req, res) =>
    res.writeHead(403, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ type: 'https://errors.payments.example/permission-denied', detail: 'This API key lacks the orders_read permission.' })),
  );
  let lines: string[] = [];
  const printed = (l: string[]): boolean => {
    lines = l;
    return false;
  };
  await expect(run(url, printed)).rejects.toThrow('This API key lacks the orders_read permission. listen needs orders_read, trigger orders_write (403 permission-denied)');
  expect(lines.some((l) => l.startsWith('Ready!'))).toBe(false);
  await expect(readFile(path.join(dir, 'state.json'))).rejects.toThrow(/ENOENT/);
});


it('stopped while a forward waits to try again: neither it nor a later event is passed, the cursor stays at the opening', async () => {
  const second = TEST_EVENT.replace('f'.repeat(64), 'a'.repeat(64));
  const url = await service((_req, res) =>
    void sse(res).write(`: connected\nid: MC4x\n\nid: MC4y\nevent: webhook.test\ndata: ${TEST_EVENT}\n\nid: MC4z\nevent: webhook.test\ndata: ${second}\n\n`),
  );
  // The receiver refuses the first event (503) and would take the second.
  const port = await closedPort();
  const taken: string[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (body === TEST_EVENT) return res.writeHead(503).end();
      taken.push(body);
      res.writeHead(200).end();
    });
  });
  servers.push(receiver);
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
  const { lines } = await run(url, (l) => l.some((x) => x.includes('trying again')), { port });
  expect(lines.filter((l) => l.includes('webhook.test'))).toEqual([]);
  expect(taken).toEqual([]);
  expect(lines.at(-1)).toBe('Stopped.');
  const state = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8')) as { cursor: string; events: unknown[] };
  expect(state).toMatchObject({ cursor: 'MC4x', events: [] });
});

/**
 * Time for listen, its stand-in service and its receiver at once: a timer fires only when the
 * test moves the clock to it, so minutes pass in an instant, in order.
 */
class FakeClock {
  t = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  sleeping = 0;
  readonly now = (): number => this.t;
  readonly setTimeout = (fn: () => void, ms: number): number => {
    this.timers.set(++this.seq, { at: this.t + ms, fn });
    return this.seq;
  };
  readonly clearTimeout = (handle: unknown): void => void this.timers.delete(handle as number);
  /** listen's waits (retries, back-off): counted, so the test knows listen is in one. */
  readonly sleep = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise((resolve) => {
      this.sleeping += 1;
      const end = (): void => {
        this.clearTimeout(id);
        this.sleeping -= 1;
        resolve();
      };
      const id = this.setTimeout(end, ms);
      signal.addEventListener('abort', end, { once: true });
    });
  /** Moves the clock to the earliest timer and fires it; false when none is set. */
  fireNext(): boolean {
    const [id, next] = [...this.timers].reduce((a, b) => (b[1].at < a[1].at ? b : a), [0, { at: Infinity, fn: () => undefined }]);
    if (id === 0) return false;
    this.timers.delete(id);
    this.t = next.at;
    next.fn();
    return true;
  }
}


it('a slow receiver answering 503 for three minutes: no reconnect, five tries per event, each kept; then one try each', async () => {
  const clock = new FakeClock();
  const SECOND = 1000;
  const event = (n: number): string => TEST_EVENT.replace('f'.repeat(64), String(n).repeat(64));
  // The service: a heartbeat every 15 s, and events at 1 s, 31 s, 61 s (the receiver refuses
  // them), 185 s and 186 s (it takes them). The bytes it wrote and listen read are counted.
  const schedule = [1, 31, 61, 185, 186].map((s, i) => ({ at: s * SECOND, n: i + 1 }));
  const wire = { written: 0, delivered: 0, reading: false, connections: 0 };
  const url = await service((_req, res) => {
    wire.connections += 1;
    wire.written = wire.delivered = 0;
    const write = (text: string): void => {
      wire.written += Buffer.byteLength(text);
      res.write(text);
    };
    sse(res);
    write(': connected\nid: MC4w\n\n');
    const timers: number[] = [];
    const heartbeat = (): void => {
      write(': heartbeat\n\n');
      timers.push(clock.setTimeout(heartbeat, 15 * SECOND));
    };
    timers.push(clock.setTimeout(heartbeat, 15 * SECOND));
    for (const { at, n } of schedule) if (at >= clock.t) timers.push(clock.setTimeout(() => write(`id: MC4${n}\nevent: webhook.test\ndata: ${event(n)}\n\n`), at - clock.t));
    res.on('close', () => timers.forEach(clock.clearTimeout));
  });
  // The receiver answers 9.5 s after a try: 503 to a try made in the first three minutes, then 200.
  const tries: string[] = [];
  let held = 0;
  const receiver = createServer((req, res) => {
    req.resume().on('end', () => {
      tries.push((req.headers['service-event-id'] as string).slice(0, 1));
      const status = clock.t < 180 * SECOND ? 503 : 200;
      held += 1;
      clock.setTimeout(() => {
        held -= 1;
        res.writeHead(status).end();
      }, 9_500);
    });
  });
  servers.push(receiver);
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;

  // listen's requests, counted until answered: forwards (to the receiver) and the others; the
  // stream's body is read through a counter that knows when listen waits for data.
  const calls = { forwards: 0, others: 0 };
  const counted: typeof fetch = async (input, init) => {
    const forward = String(input) === receiverUrl;
    if (forward) calls.forwards += 1;
    else calls.others += 1;
    try {
      const res = await fetch(input, init);
      if (forward) return new Response(await res.text(), { status: res.status, headers: res.headers });
      if (!String(input).includes('/v2/events/stream') || !res.body) return res;
      const inner = res.body.getReader();
      const body = new ReadableStream<Uint8Array>(
        {
          async pull(c) {
            wire.reading = true;
            try {
              const r = await inner.read();
              if (r.done) return c.close();
              wire.delivered += r.value.byteLength;
              c.enqueue(r.value);
            } finally {
              wire.reading = false;
            }
          },
          cancel: (reason) => inner.cancel(reason),
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { status: res.status, headers: res.headers });
    } finally {
      if (forward) calls.forwards -= 1;
      else calls.others -= 1;
    }
  };

  // listen waits on the clock alone: in a sleep, in a forward the receiver holds, or reading a
  // stream whose every byte it has read. Only then does the clock move.
  const waiting = (): boolean =>
    calls.others === 0 &&
    (clock.sleeping > 0 || (calls.forwards > 0 && held === calls.forwards) || (calls.forwards === 0 && wire.reading && wire.delivered === wire.written));

  const lines: string[] = [];
  const stop = new AbortController();
  const note = (line: string): void => {
    lines.push(line);
    if (lines.filter((l) => / -> 200 /.test(l)).length === 2) stop.abort();
  };
  const args: ListenArgs = {
    command: 'listen',
    baseUrl: url,
    apiKey: 'pk_test_x',
    apiSecret: 's',
    routes: { fallback: receiverUrl, byType: {} },
    events: [],
    secret: null,
    statePath: path.join(dir, 'state.json'),
    printSecret: false,
  };
  let finished = false;
  const running = listen(args, stop.signal, {
    output: { out: note, err: note },
    now: clock.now,
    env: {},
    sleep: clock.sleep,
    timers: clock,
    fetch: counted,
  }).finally(() => (finished = true));
  while (!finished) {
    await until(() => finished || waiting(), () => `listen to wait at ${clock.t} ms (${JSON.stringify({ calls, held, wire, sleeping: clock.sleeping })}); printed: ${lines.join(' | ')}`, { timeoutMs: 10_000, everyMs: 1 });
    if (finished) break;
    expect(clock.t, lines.join('\n')).toBeLessThan(300 * SECOND);
    expect(clock.fireNext()).toBe(true);
  }
  await running;

  expect(lines.filter((l) => /reconnect|no data/i.test(l))).toEqual([]);
  expect(wire.connections).toBe(1);
  expect(tries.join('')).toBe('11111222223333345');
  expect(lines.filter((l) => l.includes('trying again'))).toHaveLength(12);
  const state = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8')) as { cursor: string; events: Array<{ id: string; status: number }> };
  expect(state.events.map((e) => [e.id[0], e.status])).toEqual([['1', 503], ['2', 503], ['3', 503], ['4', 200], ['5', 200]]);
  expect(state.cursor).toBe('MC45');
  // The last two events took 9.5 s each, one after the other, from 185 s.
  expect(clock.t).toBe(204 * SECOND);
});
