// End to end, as a merchant on a laptop: the real server, `payments-webhooks listen` as its own
// process forwarding to a local receiver, `payments-webhooks trigger` causing the events. The
// receiver verifies every forward with verifyWebhook and the secret listen printed; a killed
// and restarted listen resumes where it stopped and loses nothing; Ctrl-C exits 0; a bad key,
// a live key and an unreachable service exit 1 with a clear message.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/index.ts';
import { freePort, startServer } from '../testing/child-server.ts';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { allEvents } from './testing/orders.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = path.join(ROOT, 'client', 'cli', 'bin.ts');

interface Cli {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first match of re in the output so far or to come. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

function cli(args: string[]): Cli {
  // node with tsx's loader, not the tsx CLI: a kill must reach the command itself.
  const child = spawn(process.execPath, ['--import', 'tsx', BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
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

/** The merchant's receiver: keeps every request, answers 200. */
async function receiver(): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, received, server };
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
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
      expect(await trigger('order.paid')).toMatch(/Triggered order\.paid on order [0-9a-f-]{36}/);
      await until(() => rx.received.length >= 2, 'order.created and order.paid at the receiver');
      const verified = rx.received.map((r) => verifyWebhook<{ type: string; id: string }>({ rawBody: r.body, headers: r.headers as Record<string, string>, secrets: secret }));
      expect(verified.map((v) => v.event.type)).toEqual(['order.created', 'order.paid']);
      expect(rx.received[1]!.headers['user-agent']).toBe('PaymentsService-Webhooks/2.0');
      // The forwarded body is the feed's envelope, byte for byte what a delivery carries.
      const feed = await allEvents(t);
      expect(verified[1]!.event).toEqual(feed.find((e) => e.type === 'order.paid'));
      await first.waitFor(new RegExp(`order\\.paid\\s+${verified[1]!.eventId}\\s+-> 200 \\[\\d+ ms\\]`));

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
  });

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
