// Request metrics as a Hono middleware: every answer counted and timed by the contract's
// operationId (set by the router), never by path, so no id or tenant ever becomes a label.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import type { Metrics } from './metrics.ts';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Requests outside the contract's operations, named by a fixed prefix. */
function fixedName(path: string): string {
  for (const name of ['healthz', 'readyz', 'metrics', 'portal', 'docs', 'openapi', 'asyncapi']) {
    if (path === `/${name}` || path.startsWith(`/${name}/`)) return name;
  }
  return 'unrouted';
}

export function requestMetrics(metrics: Metrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const method = METHODS.has(c.req.method) ? c.req.method : 'OTHER';
      metrics.request(c.get('operationId') ?? fixedName(c.req.path), method, c.res.status, (performance.now() - started) / 1000);
    }
  };
}
