// A server span for every API request, with the stable HTTP semantic conventions: named
// "{method} {http.route}", the route being the contract operation's path template, never the
// path itself (ids stay out of span names). An incoming `traceparent` makes it a child of the
// caller's span (the W3C propagator registered in setup.ts); the rest of the request (the
// handler, its store calls, the events it records) runs inside it.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
  ATTR_URL_QUERY,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../../http/app-env.ts';
import { epochNow } from './clock.ts';

/** The methods the conventions name; any other is _OTHER. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/** Probes and scrapes, every few seconds from every monitor: not traced (they would bury the requests). */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

const headerGetter: TextMapGetter<Headers> = {
  keys: (h) => [...h.keys()],
  get: (h, key) => h.get(key) ?? undefined,
};

/** Host header → server.address and server.port. */
function hostAttributes(host: string | undefined, scheme: string): Record<string, string | number> {
  if (!host) return {};
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  if (!m) return {};
  return { [ATTR_SERVER_ADDRESS]: m[1]!, [ATTR_SERVER_PORT]: m[2] ? Number(m[2]) : scheme === 'https' ? 443 : 80 };
}

/** `inner` (the request metrics) and everything after it, inside the request's server span. */
export function traceRequests(tracer: Tracer, inner: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (UNTRACED_PATHS.has(c.req.path)) return inner(c, next);
    const url = new URL(c.req.url);
    const scheme = url.protocol.replace(/:$/, '');
    const method = KNOWN_METHODS.has(c.req.method) ? c.req.method : '_OTHER';
    const parent = propagation.extract(ROOT_CONTEXT, c.req.raw.headers, headerGetter);
    const span = tracer.startSpan(
      method === '_OTHER' ? 'HTTP' : method,
      {
        kind: SpanKind.SERVER,
        startTime: epochNow(),
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_PATH]: url.pathname,
          [ATTR_URL_SCHEME]: scheme,
          ...(url.search.length > 1 ? { [ATTR_URL_QUERY]: url.search.slice(1) } : {}),
          ...hostAttributes(c.req.header('host'), scheme),
          ...(c.req.header('user-agent') ? { [ATTR_USER_AGENT_ORIGINAL]: c.req.header('user-agent')! } : {}),
        },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), () => inner(c, next));
    } catch (err) {
      span.setAttribute(ATTR_ERROR_TYPE, err instanceof Error ? err.name : 'Error');
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      const status = c.res.status;
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (c.get('operationId') !== undefined) {
        // The contract's path template, as OpenAPI writes it: /v2/orders/{orderId}.
        const route = routePath(c, -1).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        span.setAttribute(ATTR_HTTP_ROUTE, route);
        span.updateName(`${method} ${route}`);
      }
      // A server span is an error for 5xx only: a 4xx is the client's.
      if (status >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end(epochNow());
    }
  };
}
