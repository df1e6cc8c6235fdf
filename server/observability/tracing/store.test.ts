// The traced store on both stores, in process, spans kept in memory: two requests whose writes
// the group commit runs in one batch each get their own store span, with their own wait and
// commit spans inside it; each unit runs in its own request's context (a batch runs them all
// in the context of whichever started it); each event keeps its own request's traceparent.
// Also: the pruner's batch spans, and tracing off by default.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { context, ROOT_CONTEXT, trace, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../domain/store.ts';
import { eventRecord, seedEnvironment } from '../../store/suite/fixtures.ts';
import { openSqliteStore } from '../../store/sqlite/store.ts';
import { createTestDatabase } from '../../store/postgres/testing.ts';
import { openPostgresStore } from '../../store/postgres/store.ts';
import { realTimers } from '../../timers.ts';
import { createPruner } from '../../retention/pruner.ts';
import { pino } from 'pino';
import { samplerFromEnv } from './sampler.ts';
import { startTracing, tracingEnabled, type Tracing } from './setup.ts';
import { commitObserver, observeCommits, STORE_SPANS, traceStore } from './store.ts';
import { PRUNE_BATCH_SPAN, pruneBatchTracer } from './pruner.ts';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;

beforeAll(() => {
  tracing = startTracing({ OTEL_TRACES_SAMPLER: 'always_on' }, { processor: new SimpleSpanProcessor({ exporter }) })!;
});
afterAll(() => tracing.shutdown());
beforeEach(() => exporter.reset());

const spanId = (s: ReadableSpan | Span): string => s.spanContext().spanId;
const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;
const nanos = (t: [number, number]): bigint => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);

const stores: Array<[string, () => Promise<{ store: Store; close(): Promise<void> }>]> = [
  [
    'sqlite',
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'tracing-'));
      const store = await openSqliteStore({ file: path.join(dir, 'test.sqlite') });
      return { store, close: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
    },
  ],
  [
    'postgres',
    async () => {
      const db = await createTestDatabase();
      const store = await openPostgresStore({ connectionString: db.url });
      return { store, close: async () => (await store.close(), await db.drop()) };
    },
  ],
];

describe.each(stores)('traced store: %s', (_, open) => {
  it('gives each request of one batch its own store span, wait and commit, its own context inside the unit, and its own traceparent on its event', async () => {
    const { store: raw, close } = await open();
    try {
      await raw.migrate();
      expect(observeCommits(raw, commitObserver(tracing.tracer))).toBe(true);
      const store = traceStore(raw, tracing.tracer);
      const { env } = await seedEnvironment(store);
      exporter.reset();
      const requests = [tracing.tracer.startSpan('request a'), tracing.tracer.startSpan('request b')];
      const events = [eventRecord(env), eventRecord(env)];
      const activeInUnit: Array<string | undefined> = [];
      // Both submitted in one turn: the committer runs them in one batch.
      await Promise.all(
        requests.map((request, i) =>
          context.with(trace.setSpan(ROOT_CONTEXT, request), () =>
            store.transaction(async (tx) => {
              activeInUnit[i] = trace.getActiveSpan()?.spanContext().spanId;
              await tx.events.insert(events[i]!);
            }),
          ),
        ),
      );
      for (const r of requests) r.end();

      const finished = exporter.getFinishedSpans();
      const commits: ReadableSpan[] = [];
      for (const [i, request] of requests.entries()) {
        const storeSpan = finished.find((s) => s.name === STORE_SPANS.transaction && parentOf(s) === spanId(request));
        if (!storeSpan) throw new Error(`no store span under request ${i}`);
        expect(activeInUnit[i]).toBe(spanId(storeSpan));
        const wait = finished.find((s) => s.name === STORE_SPANS.wait && parentOf(s) === spanId(storeSpan));
        const commit = finished.find((s) => s.name === STORE_SPANS.commit && parentOf(s) === spanId(storeSpan));
        if (!wait || !commit) throw new Error(`no wait or commit span under request ${i}'s store span`);
        expect(nanos(storeSpan.startTime) <= nanos(wait.startTime)).toBe(true);
        expect(nanos(wait.endTime) <= nanos(commit.startTime)).toBe(true);
        expect(nanos(commit.endTime) <= nanos(storeSpan.endTime)).toBe(true);
        commits.push(commit);
        const stored = await raw.read((tx) => tx.events.get(env.id, events[i]!.id));
        const { traceId } = request.spanContext();
        expect(stored?.traceContext).toBe(`00-${traceId}-${spanId(request)}-01`);
      }
      // One batch: one COMMIT, started at the same time for both.
      expect(commits[0]!.startTime).toEqual(commits[1]!.startTime);
    } finally {
      await close();
    }
  });

  it('traces nothing and records no trace context for store calls outside a live span (the queue, a stream after its request)', async () => {
    const { store: raw, close } = await open();
    try {
      await raw.migrate();
      observeCommits(raw, commitObserver(tracing.tracer));
      const store = traceStore(raw, tracing.tracer);
      const { env } = await seedEnvironment(store);
      const event = eventRecord(env);
      const ended = tracing.tracer.startSpan('a request already answered');
      ended.end();
      exporter.reset();
      await context.with(ROOT_CONTEXT, () => store.transaction((tx) => tx.events.insert(event)));
      await context.with(trace.setSpan(ROOT_CONTEXT, ended), () => store.read((tx) => tx.events.get(env.id, event.id)));
      await store.queue.claim({ owner: 'w', now: Date.now(), leaseMs: 30_000, limit: 10, perEndpointLimit: 10 });
      expect(exporter.getFinishedSpans()).toEqual([]);
      expect(await raw.read((tx) => tx.events.get(env.id, event.id))).toEqual(event);
    } finally {
      await close();
    }
  });

  it("traces each of the pruner's batches as a trace of its own with what it removed, the store's prune inside it", async () => {
    const { store: raw, close } = await open();
    try {
      await raw.migrate();
      const store = traceStore(raw, tracing.tracer);
      const pruner = createPruner({
        store,
        clock: { now: () => Date.now() },
        timers: realTimers,
        log: pino({ level: 'silent' }),
        policy: { liveMs: 1, testMs: 1, idempotencyKeyMs: 1 },
        intervalMs: 60_000,
        batch: 100,
        pauseMs: 0,
        busyShare: 1,
        traceBatch: pruneBatchTracer(tracing.tracer),
      });
      const request = tracing.tracer.startSpan('some request');
      await context.with(trace.setSpan(ROOT_CONTEXT, request), () => pruner.pass());
      request.end();
      const batches = exporter.getFinishedSpans().filter((s) => s.name === PRUNE_BATCH_SPAN);
      expect(batches).toHaveLength(1);
      expect(batches[0]!.parentSpanContext).toBeUndefined();
      expect(batches[0]!.attributes).toMatchObject({ 'retention.more': false, 'retention.deleted.events': 0 });
      const prune = exporter.getFinishedSpans().find((s) => s.name === STORE_SPANS.prune);
      expect(prune && parentOf(prune)).toBe(spanId(batches[0]!));
    } finally {
      await close();
    }
  });
});

describe('tracing settings', () => {
  it('is off unless an OTLP endpoint is set, and off again with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(startTracing({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBeNull();
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(() => tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/only otlp/);
  });

  it('reads OTEL_TRACES_SAMPLER and its argument as the specification names them, refusing what it does not know', () => {
    expect(samplerFromEnv({}).toString()).toMatch(/ParentBased\{root=AlwaysOnSampler/);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_off' }).toString()).toBe('AlwaysOffSampler');
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString()).toMatch(/root=TraceIdRatioBased\{0.25\}/);
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/from 0 to 1/);
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/not one this server supports/);
  });
});
