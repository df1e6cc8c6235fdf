// The suite's own webhook receiver for the sender target: an HTTP server that records every
// request exactly as it arrived (raw header names, the exact body bytes, arrival time, and when
// its connection closed) and answers each one as the running scenario scripts it: 2xx, 500, a
// redirect, or no answer at all (held until the sender gives up).
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Received {
  /** Arrival order, from 0. */
  index: number;
  method: string;
  /** Path and query, as requested. */
  url: string;
  /** Lower-cased names (Node's parsed form). */
  headers: IncomingHttpHeaders;
  /** The exact body bytes. */
  body: Buffer;
  /** Wall clock (ms since the epoch) when the body was complete. */
  receivedAt: number;
  /** Monotonic clock (ms) when the body was complete. */
  receivedMono: number;
  /** Monotonic clock (ms) when the connection closed while the answer was held; unset otherwise. */
  closedMono?: number;
  /** The status answered, once answered. */
  answered?: number;
  /** Monotonic clock (ms) when the suite answered; unset while held or when never answered. */
  answeredMono?: number;
}

/** Answers one request (the body has been read); return without answering to hold it. */
export type Responder = (req: Received, res: ServerResponse) => void;

export const answer =
  (status: number, headers: Record<string, string> = {}): Responder =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(status >= 200 && status < 300 ? 'accepted' : `status ${status}`);
  };

/** Answers `status` after holding the request `ms` (the sender's next attempt comes after the answer). */
export const answerAfter =
  (ms: number, status: number): Responder =>
  (req, res) =>
    void setTimeout(() => answer(status)(req, res), ms);

export class SuiteReceiver {
  readonly received: Received[] = [];
  readonly #routes = new Map<string, Responder>();
  readonly #server: Server;
  readonly #held = new Set<ServerResponse>();
  readonly #waiters = new Set<() => void>();
  readonly url: string;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  /** Listens on host:port (port 0: any free port). */
  static async start(host: string, port: number): Promise<SuiteReceiver> {
    let self: SuiteReceiver | null = null;
    const server = createServer((req, res) => self?.handle(req, res));
    // Hold answers as long as a scenario needs (the sender cuts them at 10 s).
    server.requestTimeout = 0;
    server.headersTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    self = new SuiteReceiver(server, `http://${shownHost}:${address.port}`);
    return self;
  }

  /** Scripts the answers for requests to `prefix` or a path below it. */
  route(prefix: string, responder: Responder): void {
    this.#routes.set(prefix, responder);
  }

  /** Requests to `prefix` or a path below it. */
  at(prefix: string): Received[] {
    return this.received.filter((r) => under(pathOf(r.url), prefix));
  }

  /** Resolves when `done()` holds (checked on every arrival and close), or false after `timeoutMs`. */
  async until(done: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (done()) return true;
    return new Promise<boolean>((resolve) => {
      const finish = (value: boolean): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const check = (): void => {
        if (done()) finish(true);
      };
      const onAbort = (): void => finish(false);
      const timer = setTimeout(() => finish(done()), timeoutMs);
      this.#waiters.add(check);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Waits `ms` (or until aborted). */
  static sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }

  async close(): Promise<void> {
    for (const res of this.#held) res.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        index: this.received.length,
        method: req.method ?? '',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks),
        receivedAt: Date.now(),
        receivedMono: performance.now(),
      };
      this.received.push(r);
      const originalWriteHead = res.writeHead.bind(res);
      res.writeHead = ((status: number, ...rest: unknown[]) => {
        r.answered = status;
        r.answeredMono = performance.now();
        return (originalWriteHead as (s: number, ...a: unknown[]) => ServerResponse)(status, ...rest);
      }) as typeof res.writeHead;
      this.#held.add(res);
      res.on('close', () => {
        this.#held.delete(res);
        if (!res.writableFinished) r.closedMono = performance.now();
        this.#notify();
      });
      const path = pathOf(r.url);
      const prefix = [...this.#routes.keys()].filter((p) => under(path, p)).sort((a, b) => b.length - a.length)[0];
      const responder = prefix === undefined ? answer(404) : this.#routes.get(prefix)!;
      try {
        responder(r, res);
      } catch {
        if (!res.headersSent) answer(500)(r, res);
      }
      this.#notify();
    });
  }

  #notify(): void {
    for (const w of [...this.#waiters]) w();
  }
}

/** `path` is `prefix` itself or a path below it (segment-wise: /a/redirect is not under /a/redirect-target). */
function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export function header(r: Received, name: string): string | undefined {
  const v = r.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(', ') : v;
}
