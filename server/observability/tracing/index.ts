// OpenTelemetry traces (issue 61): off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; docs/operations.md "Tracing" says what is traced.
export { startTracing, tracingEnabled, DEFAULT_SERVICE_NAME, type Tracing } from './setup.ts';
export { traceRequests } from './http.ts';
export { commitObserver, observeCommits, traceStore, STORE_SPANS } from './store.ts';
export { attemptTracer, ATTEMPT_ATTRIBUTES } from './delivery.ts';
export { pruneBatchTracer, PRUNE_BATCH_SPAN } from './pruner.ts';
