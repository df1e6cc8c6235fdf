// One order's trace, end to end: the real server (a child process) with tracing on by the
// standard variables, an OTLP/HTTP receiver on loopback (the exporter sends OTLP's JSON
// encoding), and a webhook receiver that fails the first attempt and accepts the second. The
// spans that arrive must tell the order's story: POST /v2/orders as a server span continuing
// the caller's traceparent, its store call with the group commit's wait and commit inside it,
// and each webhook attempt as a client span of its own trace, linked to the request, the retry
// counted, the traceparent it sent being its own.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createManagementClient, createOrdersClient } from '../../../client/api.ts';
import { loadConfig } from '../../config.ts';
import { createTenant } from '../../domain/admin.ts';
import { openServices } from '../../services.ts';
import { createTestDatabase, type TestDatabase } from '../../store/postgres/testing.ts';
import { startServer, type RunningServer } from '../../testing/child-server.ts';
import { until } from '../../../testing/until.ts';
import { STORE_SPANS } from './store.ts';

/** A span as OTLP/JSON encodes it (ids as hex, enums as numbers, 64-bit integers as strings). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: number };
}

interface OtlpExport {
  resourceSpans: Array<{ resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
}

const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;

const spans: OtlpSpan[] = [];
const serviceNames = new Set<string>();
const servers: Server[] = [];
let running: RunningServer | null = null;
let database: TestDatabase | null = null;

/** The server's store: SQLite (its demo tenant), or a fresh PostgreSQL database with a tenant made as the admin tool would. */
async function serverOn(kind: 'sqlite' | 'postgres', env: NodeJS.ProcessEnv): Promise<{ server: RunningServer; tenant: { apiKey: string; apiHash: string; memberToken: string } }> {
  if (kind === 'sqlite') {
    const server = await startServer({ env });
    if (!server.tenant) throw new Error('no demo tenant');
    return { server, tenant: server.tenant };
  }
  database = await createTestDatabase();
  const pgEnv = { ...env, DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('base64url') };
  const { services } = await openServices(loadConfig(pgEnv), pino({ level: 'silent' }));
  try {
    const tenant = await createTenant(services, { name: 'Traced' });
    return { server: await startServer({ env: pgEnv }), tenant };
  } finally {
    await services.store.close();
  }
}

/** An attribute's value: string, bool, or an integer (OTLP/JSON sends int64 as a string). */
function attr(span: OtlpSpan, key: string): unknown {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  if (v === undefined) return undefined;
  if ('intValue' in v) return Number(v.intValue);
  return v.stringValue ?? v.boolValue ?? v.doubleValue;
}

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The OTLP/HTTP receiver: POST /v1/traces, JSON. */
function otlpReceiver(): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const rs of body.resourceSpans) {
        const name = rs.resource.attributes?.find((a) => a.key === 'service.name')?.value.stringValue;
        if (typeof name === 'string') serviceNames.add(name);
        for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
}

/** The merchant's webhook receiver: 500 to the first delivery of each event, 200 after. */
function webhookReceiver(seen: IncomingHttpHeaders[]): Server {
  return createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers);
      res.writeHead(seen.length === 1 ? 500 : 200).end();
    });
  });
}

afterEach(async () => {
  await running?.stop();
  running = null;
  await database?.drop();
  database = null;
  spans.length = 0;
  serviceNames.clear();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

describe.each(['sqlite', 'postgres'] as const)('OpenTelemetry traces (%s store)', (kind) => {
  it('exports one order from POST /v2/orders to its webhook 200: request, group commit, attempts linked to the request', async () => {
    const otlp = await listen(otlpReceiver());
    const hooks: IncomingHttpHeaders[] = [];
    const hookUrl = `${await listen(webhookReceiver(hooks))}/hooks`;
    const started = await serverOn(kind, {
      NODE_ENV: 'test',
      WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      RATE_LIMIT_RPS: '0',
      WEBHOOK_RETRY_SCALE: '0.01',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
      OTEL_SERVICE_NAME: 'payments-trace-test',
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
    running = started.server;
    const tenant = started.tenant;
    const management = createManagementClient({ baseUrl: running.url, memberToken: tenant.memberToken });
    expect((await management.POST('/v2/webhooks/endpoints', { body: { url: hookUrl } })).response.status).toBe(201);

    // A probe: not traced (checked once the later spans have arrived).
    expect((await fetch(`${running.url}/healthz`)).status).toBe(200);

    // The caller's own trace: the request span must continue it.
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const orders = createOrdersClient({ baseUrl: running.url, apiKey: tenant.apiKey, apiHash: tenant.apiHash });
    const created = await orders.POST('/v2/orders', {
      body: { merchantReference: 'traced-1', amountMinor: 1250 },
      headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` },
    });
    expect(created.response.status).toBe(201);

    const attemptsOf = (): OtlpSpan[] => spans.filter((s) => s.kind === CLIENT && s.name === 'POST').sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)));
    await until(() => attemptsOf().some((s) => attr(s, 'http.response.status_code') === 200), 'the delivered attempt exported', 30_000);

    expect(serviceNames).toContain('payments-trace-test');
    expect(spans.filter((s) => attr(s, 'url.path') === '/healthz')).toEqual([]);
    // The endpoint's registration was traced too, by its contract route.
    expect(spans.some((s) => s.kind === SERVER && s.name === 'POST /v2/webhooks/endpoints')).toBe(true);
    const request = spans.find((s) => s.kind === SERVER && s.name === 'POST /v2/orders');
    if (!request) throw new Error(`no POST /v2/orders server span among ${spans.map((s) => s.name).join(', ')}`);
    expect(request.traceId).toBe(callerTrace);
    expect(request.parentSpanId).toBe(callerSpan);
    expect(attr(request, 'http.request.method')).toBe('POST');
    expect(attr(request, 'http.route')).toBe('/v2/orders');
    expect(attr(request, 'url.path')).toBe('/v2/orders');
    expect(attr(request, 'url.scheme')).toBe('http');
    expect(attr(request, 'http.response.status_code')).toBe(201);

    // The store call, inside the request; the group commit's wait and commit inside it, in order.
    const inTrace = spans.filter((s) => s.traceId === callerTrace);
    const store = inTrace.find((s) => s.name === STORE_SPANS.createOrder && s.parentSpanId === request.spanId);
    if (!store) throw new Error(`no ${STORE_SPANS.createOrder} span under the request among ${inTrace.map((s) => s.name).join(', ')}`);
    const wait = inTrace.find((s) => s.name === STORE_SPANS.wait && s.parentSpanId === store.spanId);
    const commit = inTrace.find((s) => s.name === STORE_SPANS.commit && s.parentSpanId === store.spanId);
    if (!wait || !commit) throw new Error(`no group commit wait/commit under the store span among ${inTrace.map((s) => s.name).join(', ')}`);
    expect(BigInt(wait.startTimeUnixNano) >= BigInt(store.startTimeUnixNano)).toBe(true);
    expect(BigInt(wait.endTimeUnixNano) <= BigInt(commit.startTimeUnixNano)).toBe(true);
    expect(BigInt(commit.endTimeUnixNano) <= BigInt(store.endTimeUnixNano)).toBe(true);
    expect(BigInt(store.endTimeUnixNano) <= BigInt(request.endTimeUnixNano)).toBe(true);

    // Two attempts (500, then 200): client spans of their own traces, each linked to the request.
    const attempts = attemptsOf();
    expect(attempts.map((s) => attr(s, 'http.response.status_code'))).toEqual([500, 200]);
    for (const a of attempts) {
      expect(a.traceId).not.toBe(callerTrace);
      expect(a.parentSpanId ?? '').toBe('');
      expect(a.links?.map((l) => [l.traceId, l.spanId])).toEqual([[callerTrace, request.spanId]]);
      expect(attr(a, 'http.request.method')).toBe('POST');
      expect(attr(a, 'url.full')).toBe(hookUrl);
      expect(attr(a, 'server.address')).toBe('127.0.0.1');
    }
    expect(attempts[0]!.status?.code).toBe(STATUS_ERROR);
    expect(attr(attempts[0]!, 'error.type')).toBe('500');
    expect(attr(attempts[0]!, 'http.request.resend_count')).toBeUndefined();
    expect(attr(attempts[1]!, 'http.request.resend_count')).toBe(1);
    // Each webhook carried its own attempt's traceparent.
    expect(hooks.map((h) => h.traceparent)).toEqual(attempts.map((a) => `00-${a.traceId}-${a.spanId}-01`));
  }, 90_000);
});
