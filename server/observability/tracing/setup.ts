// Tracing's start: off unless the standard OpenTelemetry variables name where spans go
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and then the SDK's
// TracerProvider, a batching processor and its OTLP/HTTP exporter (which reads the
// OTEL_EXPORTER_OTLP_* variables itself: endpoint, headers, timeout, compression). Chosen once:
// with tracing off nothing is registered, and every caller holds null instead of a Tracing, so
// the request path does no work and allocates nothing for it.
import { context, diag, DiagLogLevel, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { ConfigError } from '../../config.ts';
import { samplerFromEnv } from './sampler.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** service.name when OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) does not set one. */
export const DEFAULT_SERVICE_NAME = 'payments-service';
const INSTRUMENTATION = 'payments-service';

export interface Tracing {
  readonly tracer: Tracer;
  /** Exports what is still buffered, then stops (shutdown). */
  shutdown(): Promise<void>;
}

/** The variables turn tracing on: an OTLP endpoint, and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none. */
export function tracingEnabled(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',').map((e) => e.trim().toLowerCase());
  if (exporters.includes('none')) return false;
  const unsupported = exporters.filter((e) => e !== 'otlp' && e !== '');
  if (unsupported.length > 0) throw new ConfigError(`OTEL_TRACES_EXPORTER: only otlp (over HTTP) is supported, not ${unsupported.join(', ')}`);
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** OTEL_BSP_* (milliseconds, counts), which the SDK no longer reads itself; absent: its defaults. */
function batchOptions(env: Env): { scheduledDelayMillis?: number; exportTimeoutMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number } {
  const read = (name: string): number | undefined => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new ConfigError(`${name} must be a whole number, not "${raw}"`);
    return n;
  };
  const opts = {
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
}

export interface TracingOptions {
  /** Where the SDK's own warnings and errors go (an export that failed: back end down); default nowhere. */
  log?: Logger;
  /** Replaces the OTLP exporter's batch processor (tests: spans kept in memory). */
  processor?: SpanProcessor;
}

/** The SDK's diagnostics as log lines: its warnings and errors only (a failed export, a dropped span). */
function diagnosticsTo(log: Logger): void {
  const line = (level: 'warn' | 'error') => (message: string, ...args: unknown[]) => log[level]({ component: 'tracing', details: args.map(String) }, message);
  const none = (): void => undefined;
  diag.setLogger({ error: line('error'), warn: line('warn'), info: none, debug: none, verbose: none }, DiagLogLevel.WARN);
}

/**
 * Starts tracing when the variables ask for it (tracingEnabled), else returns null. Registers
 * the global context manager (AsyncLocalStorage), the W3C traceparent propagator and the
 * provider.
 */
export function startTracing(env: Env = process.env, opts: TracingOptions = {}): Tracing | null {
  const { processor } = opts;
  if (!processor && !tracingEnabled(env)) return null;
  const sampler = samplerFromEnv(env);
  if (opts.log) diagnosticsTo(opts.log);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({
    sampler,
    resource,
    spanProcessors: [processor ?? new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchOptions(env) })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    tracer: provider.getTracer(INSTRUMENTATION),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
}
