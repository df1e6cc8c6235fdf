// End to end, as a merchant on a laptop: the real server, `payments-webhooks listen` as its own
// process forwarding to a local receiver, `payments-webhooks trigger` causing the events. The
// receiver verifies every forward with verifyWebhook and the secret listen printed; a killed
// and restarted listen resumes where it stopped and loses nothing; Ctrl-C exits 0; a bad key,
// a live key and an unreachable service exit 1 with a clear message. From the moment a session
// exists nothing is lost: stopped before any forward, killed with -9 in a burst, a receiver down
// then back; a key without orders_read gets no Ready! and no state; --print-secret, --forward-to
// per type, resend, and trigger's data overrides.
import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { freePort, startServer } from '../testing/child-server.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { until } from '../../testing/until.ts';
import { allEvents, WITH_TOKEN } from './testing/orders.ts';
import { childEntry } from '../testing/server-bundle.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Cli {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first match of re in the output so far or to come. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

function cli(args: string[]): Cli {
  // node with tsx's loader, not the tsx CLI: a kill must reach the command itself.
  const child = spawn(process.execPath, [...childEntry('client/cli/bin.ts'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let out = '';
  const waiters = new Set<() => void>();
  const append = (chunk: Buffer): void => {
    out += chunk.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    waitFor(re, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = re.exec(out);
          if (m) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${re} in the output of payments-webhooks ${args[0]}:\n${out}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** The merchant's receiver: keeps every request, answers 200; on `port` when given. */
async function receiver(port = 0): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, received, server };
}

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(os.tmpdir(), 'listen-e2e-'));
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('payments-webhooks listen and trigger', () => {
  it('forwards a triggered order.paid, verifiably signed; resumes after a kill without losing events; Ctrl-C exits 0', async () => {
    const t = await server.newTenant();
    const rx = await receiver();
    const auth = ['--api-key', t.apiKey, '--api-secret', t.apiHash, '--base-url', server.url];
    const listenArgs = ['listen', '--forward-to', rx.url, ...auth, '--state', path.join(dir, 'state.json')];
    const trigger = async (event: string): Promise<string> => {
      const run = cli(['trigger', event, ...auth]);
      expect(await run.exited, run.output()).toBe(0);
      return run.output();
    };
    try {
      const first = cli(listenArgs);
      const secret = (await first.waitFor(/signing secret is (whsec_[A-Za-z0-9_-]+)/))[1]!;
      const triggered = await trigger('order.paid');
      expect(triggered).toMatch(/Triggered order\.paid on order [0-9a-f-]{36}/);
      await until(() => rx.received.length >= 2, 'order.created and order.paid at the receiver');
      const verified = rx.received.map((r) => verifyWebhook<{ type: string; id: string }>({ rawBody: r.body, headers: r.headers as Record<string, string>, secrets: secret }));
      expect(verified.map((v) => v.event.type)).toEqual(['order.created', 'order.paid']);
      expect(rx.received[1]!.headers['user-agent']).toBe('PaymentsService-Webhooks/2.0');
      // The forwarded body is the feed's envelope, byte for byte what a delivery carries.
      const feed = await allEvents(t);
      expect(verified[1]!.event).toEqual(feed.find((e) => e.type === 'order.paid'));
      // One short line per event: its id's start and the order's number, as trigger printed it.
      const orderNumber = /\((ORD-\d+)\)/.exec(triggered)![1]!;
      const line = (await first.waitFor(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  order\\.paid\\s+${verified[1]!.eventId.slice(0, 8)}  ${orderNumber}\\s+-> 200 \\[\\d+ ms\\]$`, 'm')))[0];
      expect(line.length).toBeLessThan(80);

      // Killed without warning; one event is recorded while nobody listens.
      first.child.kill('SIGKILL');
      await first.exited;
      await trigger('order.payment_review_required');
      const second = cli(listenArgs);
      await second.waitFor(/Resuming after the last forwarded event/);
      expect((await second.waitFor(/signing secret is (whsec_[A-Za-z0-9_-]+)/))[1]).toBe(secret);
      await trigger('webhook.test');
      await until(() => rx.received.length >= 5, 'the events of the restart');
      const types = rx.received.map((r) => verifyWebhook<{ type: string }>({ rawBody: r.body, headers: r.headers as Record<string, string>, secrets: secret }).event.type);
      expect(types).toEqual(['order.created', 'order.paid', 'order.created', 'order.payment_review_required', 'webhook.test']);
      // Every order event of the environment reached the receiver, each once.
      const ids = rx.received.map((r) => r.headers['service-event-id']);
      expect(new Set(ids).size).toBe(ids.length);
      expect((await allEvents(t)).map((e) => e.id).every((id) => ids.includes(id))).toBe(true);

      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
      expect(second.output()).toContain('Stopped.');
    } finally {
      rx.server.close();
    }
  });

  it('survives a server restart: prints that it lost the connection, reconnects, and loses nothing', async () => {
    const port = await freePort();
    const first = await startServer({ env: { PORT: String(port) } });
    const tenant = first.tenant!;
    const rx = await receiver();
    // The port both servers listen on (startServer's url names the one it would have chosen).
    const url = `http://127.0.0.1:${port}`;
    const auth = ['--api-key', tenant.apiKey, '--api-secret', tenant.apiHash, '--base-url', url];
    const l = cli(['listen', '--forward-to', rx.url, ...auth, '--state', path.join(dir, 'restart.json')]);
    let second: Awaited<ReturnType<typeof startServer>> | null = null;
    try {
      await l.waitFor(/signing secret is/);
      expect(await cli(['trigger', 'order.created', ...auth]).exited).toBe(0);
      await until(() => rx.received.length === 1, 'the event before the restart');
      await first.stop();
      await l.waitFor(/reconnecting in \d+\.\d s \(attempt 1\)/);
      second = await startServer({ dataDir: first.dataDir, env: { PORT: String(port) } });
      await l.waitFor(/Reconnected\./, 30_000);
      expect(await cli(['trigger', 'order.paid', ...auth]).exited).toBe(0);
      await until(() => rx.received.length === 3, 'the events after the restart');
      expect(rx.received.map((r) => (JSON.parse(r.body) as { type: string }).type)).toEqual(['order.created', 'order.created', 'order.paid']);
    } finally {
      l.child.kill('SIGINT');
      await l.exited;
      await second?.stop();
      await first.stop();
      rx.server.close();
    }
    // Two server processes started and one stopped: about 20 s on a quiet machine.
  }, 90_000);

  it('forwards only the --events asked for', async () => {
    const t = await server.newTenant();
    const rx = await receiver();
    const auth = ['--api-key', t.apiKey, '--api-secret', t.apiHash, '--base-url', server.url];
    const l = cli(['listen', '--forward-to', rx.url, ...auth, '--events', 'order.paid', '--state', path.join(dir, 'filtered.json')]);
    try {
      await l.waitFor(/signing secret is/);
      const run = cli(['trigger', 'order.paid', ...auth]);
      expect(await run.exited).toBe(0);
      await l.waitFor(/order\.paid .* -> 200/);
      expect(rx.received.map((r) => (JSON.parse(r.body) as { type: string }).type)).toEqual(['order.paid']);
    } finally {
      l.child.kill('SIGINT');
      await l.exited;
      rx.server.close();
    }
  });

  it('exits 1 with a clear message for a bad key, a live key or an unreachable service', async () => {
    const t = await server.newTenant();
    const live = await server.keyWith(t, ['orders_read'], 'live');
    const forward = ['listen', '--forward-to', 'http://127.0.0.1:9/webhooks', '--state', path.join(dir, 'refused.json')];
    const bad = cli([...forward, '--api-key', t.apiKey, '--api-secret', 'wrong', '--base-url', server.url]);
    expect(await bad.exited).toBe(1);
    expect(bad.output()).toMatch(/API key or its secret was refused \(401/);
    const liveRun = cli([...forward, '--api-key', live.apiKey, '--api-secret', live.apiHash, '--base-url', server.url]);
    expect(await liveRun.exited).toBe(1);
    expect(liveRun.output()).toMatch(/live environment: listen and trigger take test keys only/);
    const nowhere = cli([...forward, '--api-key', t.apiKey, '--api-secret', t.apiHash, '--base-url', `http://127.0.0.1:${await freePort()}`]);
    expect(await nowhere.exited).toBe(1);
    expect(nowhere.output()).toMatch(/cannot reach the service at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    const triggerLive = cli(['trigger', 'order.created', '--api-key', live.apiKey, '--api-secret', live.apiHash, '--base-url', server.url]);
    expect(await triggerLive.exited).toBe(1);
  });

});

describe('listen loses nothing from the moment its session exists', () => {
  const authOf = (t: { apiKey: string; apiHash: string }): string[] => ['--api-key', t.apiKey, '--api-secret', t.apiHash, '--base-url', server.url];
  const typesOf = (rx: { received: Received[] }): string[] => rx.received.map((r) => (JSON.parse(r.body) as { type: string }).type);

  it('stopped before any forward, an event, then a restart: the event arrives', async () => {
    const t = await server.newTenant();
    const rx = await receiver();
    const state = path.join(dir, 'never-forwarded.json');
    const listenArgs = ['listen', '--forward-to', rx.url, ...authOf(t), '--state', state];
    try {
      const first = cli(listenArgs);
      await first.waitFor(/signing secret is/);
      // Written before Ready!: the stream's opening position, though nothing came yet.
      expect((JSON.parse(await readFile(state, 'utf8')) as { cursor: string | null }).cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      first.child.kill('SIGINT');
      expect(await first.exited).toBe(0);
      expect(await cli(['trigger', 'order.created', ...authOf(t)]).exited).toBe(0);
      const second = cli(listenArgs);
      await second.waitFor(/Resuming after the last forwarded event/);
      await until(() => rx.received.length === 1, 'the event recorded while listen was stopped');
      expect(typesOf(rx)).toEqual(['order.created']);
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    } finally {
      rx.server.close();
    }
  });

  it('kill -9 in the middle of a burst: every event arrives', async () => {
    const t = await server.newTenant();
    const rx = await receiver();
    const listenArgs = ['listen', '--forward-to', rx.url, ...authOf(t), '--state', path.join(dir, 'burst.json')];
    const BURST = 40;
    try {
      const first = cli(listenArgs);
      await first.waitFor(/signing secret is/);
      const created = Promise.all(Array.from({ length: BURST }, (_, i) => t.orders.POST('/v2/orders', { body: { ...WITH_TOKEN, merchantReference: `burst-${i}` } })));
      await until(() => rx.received.length >= 5, 'the first events of the burst');
      first.child.kill('SIGKILL');
      await first.exited;
      const before = rx.received.length;
      expect((await created).every((r) => r.response.status === 201)).toBe(true);
      const second = cli(listenArgs);
      await until(() => new Set(rx.received.map((r) => r.headers['service-event-id'])).size === BURST, `all ${BURST} events (${before} before the kill)`);
      const feed = await allEvents(t);
      const ids = new Set(rx.received.map((r) => r.headers['service-event-id']));
      expect(feed.filter((e) => e.type === 'order.created').every((e) => ids.has(e.id))).toBe(true);
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    } finally {
      rx.server.close();
    }
  });

  it('a receiver down, then back: the event arrives, tried again with back-off; resend forwards it again by its short id', async () => {
    const t = await server.newTenant();
    const port = await freePort();
    const state = path.join(dir, 'receiver-down.json');
    const l = cli(['listen', '--forward-to', `http://127.0.0.1:${port}/webhooks`, ...authOf(t), '--state', state]);
    let rx: Awaited<ReturnType<typeof receiver>> | null = null;
    try {
      const secret = (await l.waitFor(/signing secret is (whsec_[A-Za-z0-9_-]+)/))[1]!;
      expect(await cli(['trigger', 'webhook.test', ...authOf(t)]).exited).toBe(0);
      const short = (await l.waitFor(/ {2}([0-9a-f]{8}) -> failed \(ECONNREFUSED\); trying again in 0\.5 s \(try 2 of 5\)/))[1]!;
      rx = await receiver(port);
      const line = (await l.waitFor(new RegExp(`webhook\\.test\\s+${short}  -\\s+-> 200`)))[0];
      expect(line).toBeTruthy();
      expect(rx.received).toHaveLength(1);
      const first = verifyWebhook({ rawBody: rx.received[0]!.body, headers: rx.received[0]!.headers as Record<string, string>, secrets: secret });
      expect(first.eventId.startsWith(short)).toBe(true);

      const again = cli(['resend', short, '--state', state]);
      expect(await again.exited, again.output()).toBe(0);
      expect(again.output()).toMatch(new RegExp(`webhook\\.test\\s+${short}  resent\\s+-> 200`));
      expect(rx.received).toHaveLength(2);
      const resent = verifyWebhook({ rawBody: rx.received[1]!.body, headers: rx.received[1]!.headers as Record<string, string>, secrets: secret });
      expect(resent.eventId).toBe(first.eventId);
      expect(rx.received[1]!.body).toBe(rx.received[0]!.body);
      const unknown = cli(['resend', 'ffffffff', '--state', state]);
      expect(await unknown.exited).toBe(1);
      expect(unknown.output()).toMatch(/no event ffffffff among the last 1 forwarded/);
    } finally {
      l.child.kill('SIGINT');
      await l.exited;
      rx?.server.close();
    }
  });

  it('a key without orders_read: exits 1 with why, prints no Ready!, writes no state', async () => {
    const t = await server.newTenant();
    const writer = await server.keyWith(t, ['orders_write']);
    const state = path.join(dir, 'no-orders-read.json');
    const l = cli(['listen', '--forward-to', 'http://127.0.0.1:9/webhooks', ...authOf(writer), '--state', state]);
    expect(await l.exited).toBe(1);
    expect(l.output()).toMatch(/lacks the orders_read permission. listen needs orders_read, trigger orders_write \(403 permission-denied\)/);
    expect(l.output()).not.toContain('Ready!');
    await expect(access(state)).rejects.toThrow();
  });

  it('--print-secret opens the session for CI; --forward-to per event type', async () => {
    const t = await server.newTenant();
    const paidRx = await receiver();
    const otherRx = await receiver();
    const state = path.join(dir, 'ci.json');
    try {
      const print = cli(['listen', '--print-secret', ...authOf(t), '--state', state]);
      expect(await print.exited, print.output()).toBe(0);
      const secret = print.output().trim();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=_-]+$/);
      // Recorded after the session opened, before listen runs: forwarded by it.
      expect(await cli(['trigger', 'order.paid', ...authOf(t)]).exited).toBe(0);
      const l = cli(['listen', '--forward-to', otherRx.url, '--forward-to', `order.paid=${paidRx.url}`, ...authOf(t), '--state', state]);
      await l.waitFor(/Ready! Forwarding order\.paid to http:\/\/127\.0\.0\.1:\d+\/webhooks, the others to/);
      await until(() => paidRx.received.length === 1 && otherRx.received.length === 1, 'order.paid and order.created at their receivers');
      expect(typesOf(paidRx)).toEqual(['order.paid']);
      expect(typesOf(otherRx)).toEqual(['order.created']);
      verifyWebhook({ rawBody: paidRx.received[0]!.body, headers: paidRx.received[0]!.headers as Record<string, string>, secrets: secret });
      l.child.kill('SIGINT');
      expect(await l.exited).toBe(0);
    } finally {
      paidRx.server.close();
      otherRx.server.close();
    }
  });

  it('trigger with the merchant data: overrides of the example, checked against the event schema before anything is sent', async () => {
    const t = await server.newTenant();
    const run = cli(['trigger', 'order.paid', ...authOf(t), '--set', 'data.merchantReference=cart-own', '--data', '{"amountMinor":1250,"amountBaseUnits":"12500000"}']);
    expect(await run.exited, run.output()).toBe(0);
    const paid = (await allEvents(t)).find((e) => e.type === 'order.paid')!;
    expect(paid.data).toMatchObject({ merchantReference: 'cart-own', amountMinor: 1250, amountBaseUnits: '12500000', receivedBaseUnits: '12500000' });
    const bad = cli(['trigger', 'order.created', ...authOf(t), '--set', 'data.amountMinor=12.5']);
    expect(await bad.exited).toBe(1);
    expect(bad.output()).toContain('the data does not match order.created\'s schema: data/amountMinor Instance type "number" is invalid. Expected "integer".');
    expect(await allEvents(t)).toHaveLength(2);
  });
});
