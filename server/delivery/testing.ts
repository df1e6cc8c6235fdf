// Test helpers for the delivery engine and everything built on it (management API, crash
// tests): an HTTP(S) receiver on 127.0.0.1 that records exactly what it was sent, a throwaway
// self-signed certificate, a port nothing listens on, a fake DNS resolver, a loopback-only
// destination policy, a log capture, and seeding of a tenant with an active endpoint.
//
// Nothing here ever connects anywhere but 127.0.0.1: host names only reach the fake resolver.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { pino, type Logger } from 'pino';
import { generateSecret } from '../../signing/signature.ts';
import { createTenant } from '../domain/admin.ts';
import type { Scope, Services } from '../domain/context.ts';
import { recordOrderEvent, type NewOrderEvent } from '../domain/events.ts';
import { newEndpointRecord } from '../domain/endpoints/endpoints.ts';
import type { DeliveryRecord, EndpointRecord, EventRecord, SignatureScheme } from '../domain/model.ts';
import type { ClaimedDelivery, Page, Store } from '../domain/store.ts';
import { createDestinationPolicy, type DestinationPolicy, type Resolver } from '../destination/policy.ts';
import type { Timers } from '../timers.ts';

const run = promisify(execFile);

// ---- receiver ------------------------------------------------------------------------------

export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  url: string;
  /** Lower-cased header names (Node's parsed form). */
  headers: IncomingHttpHeaders;
  /** Names and values as they came on the wire, alternating. */
  rawHeaders: string[];
  /** The exact body bytes. */
  body: Buffer;
  /** Date.now() when the body was complete. */
  receivedAt: number;
  /** Client port of the connection (the same port twice means a reused connection). */
  remotePort: number | undefined;
}

/**
 * Answers one request. The body has been read already. Return without answering to make the
 * request hang (a slow endpoint); `req.socket.destroy()` resets the connection.
 */
export type ReceiverHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer, index: number) => void | Promise<void>;

export interface Receiver {
  /** Base URL, e.g. http://127.0.0.1:41234 (https for a TLS receiver). */
  readonly url: string;
  readonly port: number;
  /** Every request received, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Replaces how requests are answered (default: 200 `{"received":true}`). */
  handle(handler: ReceiverHandler): void;
  /** Resolves once `count` requests arrived in total (rejects after timeoutMs). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export const answer =
  (status: number, body = '', headers: Record<string, string> = {}): ReceiverHandler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
    res.end(body);
  };

/** A hanging endpoint: never answers (the connection is closed by the client's deadline or close()). */
export const neverAnswer: ReceiverHandler = () => {};

export async function startReceiver(opts: { handler?: ReceiverHandler; tls?: { key: string; cert: string } } = {}): Promise<Receiver> {
  let handler: ReceiverHandler = opts.handler ?? answer(200, '{"received":true}', { 'content-type': 'application/json' });
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const index = requests.length;
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body, receivedAt: Date.now(), remotePort: req.socket.remotePort });
      for (const wake of waiters) wake();
      Promise.resolve()
        .then(() => handler(req, res, body, index))
        .catch(() => req.socket.destroy());
    });
  };
  const server: Server = opts.tls ? createHttpsServer({ key: opts.tls.key, cert: opts.tls.cert }, onRequest) : createHttpServer(onRequest);
  // Errors on client sockets (TLS handshakes the client refused, resets) are expected here.
  server.on('clientError', (_err, socket) => socket.destroy());
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    handle(next) {
      handler = next;
    },
    waitFor(count, timeoutMs = 5_000) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (requests.length >= count) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(requests.slice());
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} requests within ${timeoutMs} ms, got ${requests.length}`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port that nothing listens on (connection refused). */
export async function closedPort(): Promise<number> {
  const server = createHttpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---- TLS -----------------------------------------------------------------------------------

export interface TestCertificate {
  /** PEM private key. */
  key: string;
  /** PEM self-signed certificate for 127.0.0.1 and localhost; also the CA to trust. */
  cert: string;
}

let certificate: Promise<TestCertificate> | null = null;

/** A self-signed certificate made with `openssl req -x509` (once per test process). */
export function testCertificate(): Promise<TestCertificate> {
  certificate ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webhook-test-cert-'));
    try {
      const key = join(dir, 'key.pem');
      const cert = join(dir, 'cert.pem');
      await run('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=localhost',
        '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ]);
      return { key: await readFile(key, 'utf8'), cert: await readFile(cert, 'utf8') };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return certificate;
}

// ---- destinations --------------------------------------------------------------------------

type Answer = { address: string; family: 4 | 6 };

/** A resolver answering from a table; other names fail with ENOTFOUND. Never asks real DNS. */
export function fakeResolver(table: Record<string, Answer[] | Error> = {}): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<Answer[]> => {
    calls.push(hostname);
    const entry = table[hostname];
    if (entry === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
    if (entry instanceof Error) throw entry;
    return entry;
  };
  return Object.assign(resolve, { calls });
}

/**
 * The development policy (http, any port, loopback allowed; everything else still refused)
 * with a fake resolver, so tests reach 127.0.0.1 receivers and nothing else.
 */
export function loopbackPolicy(resolve: Resolver = fakeResolver()): DestinationPolicy {
  return createDestinationPolicy({ allowInsecure: true, nodeEnv: 'test', resolve });
}

// ---- logs ----------------------------------------------------------------------------------

/** A pino logger whose lines are kept (to assert what is, and is not, logged). */
export function captureLogger(level = 'debug'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { log: pino({ level }, stream), lines };
}

// ---- timers --------------------------------------------------------------------------------

/**
 * Timers whose timeouts fire only when told to (a test decides when every wait ends). A turn
 * of the event loop is not a wait in time: setImmediate runs for real.
 */
export class FakeTimers implements Timers {
  private seq = 0;
  readonly pending = new Map<number, { fn: () => void; ms: number }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { fn, ms });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  setImmediate(fn: () => void): void {
    setImmediate(fn);
  }
  /** Delays of the timeouts currently set. */
  delays(): number[] {
    return [...this.pending.values()].map((t) => t.ms);
  }
  /** Fires the timeouts currently set. */
  fireAll(): void {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const t of due) t.fn();
  }
}

// ---- seeding -------------------------------------------------------------------------------

export interface SeededEndpoint {
  scope: Scope;
  endpoint: EndpointRecord;
  /** The plain signing secret (sealed in the store). */
  secret: string;
  /** The test environment's payout callback secret. */
  callbackSecret: string;
}

/** A new tenant (test environment) with an active endpoint at `url`, signing in `signatureScheme`. */
export async function seedEndpoint(services: Services, url: string, signatureScheme: SignatureScheme = 'service-signature'): Promise<SeededEndpoint> {
  const tenant = await createTenant(services, { name: 'Northwind Games Ltd' });
  const secret = generateSecret();
  const now = services.clock.now();
  const { scope, endpoint } = await services.store.transaction(async (tx) => {
    const env = await tx.tenants.findEnvironment(tenant.tenantId, 'test');
    if (!env) throw new Error('seeded tenant has no test environment');
    const endpoint = newEndpointRecord(services, env.id, url, secret, signatureScheme, now);
    await tx.endpoints.insert(endpoint);
    const scope: Scope = { tenantId: tenant.tenantId, environmentId: env.id, environment: 'test' };
    return { scope, endpoint };
  });
  return { scope, endpoint, secret, callbackSecret: tenant.callbackSecret };
}

/** Records an order event through the outbox (event + delivery in one transaction). */
export async function recordEvent(
  services: Services,
  scope: Scope,
  e: Partial<NewOrderEvent> = {},
): Promise<{ event: EventRecord; deliveryId: string }> {
  const orderId = e.orderId ?? '6f1c2a9e-4b7d-4e0a-9c55-3d2f8b1a7e10';
  const { event, deliveryId } = await services.store.transaction((tx) =>
    recordOrderEvent(tx, services, scope, {
      type: e.type ?? 'order.created',
      orderId,
      merchantReference: e.merchantReference ?? 'INV-2026-0042',
      data: e.data ?? { orderId, merchantReference: e.merchantReference ?? 'INV-2026-0042', amountMinor: 4999, currency: 'USD', status: 'open', receivedBaseUnits: '0' },
    }),
  );
  if (deliveryId === null) throw new Error('no delivery was prepared: the environment has no active endpoint');
  return { event, deliveryId };
}

// ---- claimed deliveries (for the worker's parts) -------------------------------------------

let claimedSeq = 0;

/** A claimed delivery as the queue returns it, without a store: to endpoint `endpointId` (null: a payout callback to `url`). */
export function claimedDelivery(o: { endpointId?: string | null; url?: string; attemptCount?: number; leaseExpiresAt?: number; id?: string } = {}): ClaimedDelivery {
  const n = ++claimedSeq;
  const id = o.id ?? `dlv_${n}`;
  const eventId = n.toString(16).padStart(64, '0');
  return {
    delivery: {
      id,
      environmentId: 'env_1',
      eventId,
      kind: o.endpointId === null ? 'payout_callback' : 'order_event',
      endpointId: o.endpointId === undefined ? 'ep_1' : o.endpointId,
      endpointVersion: o.endpointId === null ? null : 1,
      url: o.url ?? 'http://127.0.0.1:9/hooks',
      state: 'pending',
      attemptCount: o.attemptCount ?? 0,
      cycle: 1,
      nextAttemptAt: 0,
      leaseOwner: 'worker',
      leaseExpiresAt: o.leaseExpiresAt ?? null,
      orderId: null,
      merchantReference: null,
      transactionId: null,
      createdAt: 0,
      updatedAt: 0,
      deliveredAt: null,
    },
    event: { id: eventId, environmentId: 'env_1', type: 'order.created', payload: `{"id":"${eventId}"}`, orderId: null, merchantReference: null, transactionId: null, createdAt: 0 },
    secretEnc: 'sealed',
    signatureScheme: 'service-signature',
  };
}

// ---- leases --------------------------------------------------------------------------------

/**
 * An environment's pending deliveries under a lease (one live at `liveAt` when given), read
 * through the store, whichever way it keeps leases: after a kill, what the dead process held.
 */
export async function leasedDeliveries(store: Store, environmentId: string, liveAt?: number): Promise<DeliveryRecord[]> {
  const leased: DeliveryRecord[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<DeliveryRecord> = await store.read((tx) => tx.deliveries.list(environmentId, { q: null, limit: 100, cursor }));
    leased.push(...page.items.filter((d) => d.state === 'pending' && d.leaseOwner !== null && (liveAt === undefined || (d.leaseExpiresAt ?? 0) > liveAt)));
    cursor = page.nextCursor;
  } while (cursor);
  return leased;
}
