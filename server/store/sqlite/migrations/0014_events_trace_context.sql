-- 0014_events_trace_context: OpenTelemetry (issue 61). The W3C traceparent of the request that
-- recorded an event, written only while tracing is on (NULL otherwise), so the event's delivery
-- attempts, minutes or days later, carry a span link back to that request.
ALTER TABLE events ADD COLUMN trace_context TEXT;
