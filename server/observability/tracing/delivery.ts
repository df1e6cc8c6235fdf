// A client span for every webhook attempt, with the stable HTTP semantic conventions. An
// attempt runs minutes or days after the request that recorded its event, so it starts a trace
// of its own and carries a span link to that request (the event's traceContext, kept with the
// event by store.ts), as pg-boss and Hookdeck Outpost do for their queued jobs. The attempt's
// own `traceparent` goes out with the webhook: a receiver that traces continues this trace.
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link, type Tracer } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import type { AttemptTracer } from '../../delivery/worker.ts';
import { epochNow } from './clock.ts';

/** Attributes of our own, beside the conventions' (the ids an operator searches by). */
export const ATTEMPT_ATTRIBUTES = {
  deliveryId: 'webhook.delivery.id',
  eventId: 'webhook.event.id',
  eventType: 'webhook.event.type',
  cycle: 'webhook.delivery.cycle',
} as const;

/**
 * The URL as a span may show it: no credentials, no query (a receiver's URL may carry a token
 * there, and traces are not the place for secrets).
 */
function shownUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** The span link to the request that recorded the event, when it was traced. */
function linkTo(traceContext: string | undefined): Link[] {
  if (traceContext === undefined) return [];
  const spanContext = parseTraceParent(traceContext);
  return spanContext ? [{ context: spanContext }] : [];
}

export function attemptTracer(tracer: Tracer): AttemptTracer {
  return {
    start(lease) {
      const { delivery, event } = lease;
      const url = new URL(delivery.url);
      const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
      const span = tracer.startSpan(
        'POST',
        {
          kind: SpanKind.CLIENT,
          root: true,
          startTime: epochNow(),
          links: linkTo(event.traceContext),
          attributes: {
            [ATTR_HTTP_REQUEST_METHOD]: 'POST',
            [ATTR_URL_FULL]: shownUrl(url),
            [ATTR_SERVER_ADDRESS]: url.hostname,
            [ATTR_SERVER_PORT]: port,
            // Set on retries only (the conventions'): the attempts before this one.
            ...(delivery.attemptCount > 0 ? { [ATTR_HTTP_REQUEST_RESEND_COUNT]: delivery.attemptCount } : {}),
            [ATTEMPT_ATTRIBUTES.deliveryId]: delivery.id,
            [ATTEMPT_ATTRIBUTES.eventId]: event.id,
            [ATTEMPT_ATTRIBUTES.eventType]: event.type,
            [ATTEMPT_ATTRIBUTES.cycle]: delivery.cycle,
          },
        },
        ROOT_CONTEXT,
      );
      return {
        headers(signed) {
          const out = { ...signed };
          propagation.inject(trace.setSpan(ROOT_CONTEXT, span), out);
          return out;
        },
        end(sent) {
          if (sent.statusCode !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, sent.statusCode);
          // A client span is an error for no answer or a 4xx/5xx; anything else but a 2xx fails the attempt too.
          const failure = sent.errorClass ?? (sent.success ? null : String(sent.statusCode));
          if (failure !== null) {
            span.setAttribute(ATTR_ERROR_TYPE, failure);
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end(epochNow());
        },
      };
    },
  };
}
