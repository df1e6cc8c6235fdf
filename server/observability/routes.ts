// The operator's routes: /readyz (readiness, 503 problem+json with the reason) and /metrics
// (Prometheus text). /metrics is guarded: on the public port it is served only with
// METRICS_TOKEN (a bearer token, compared in constant time); on the operator's own listener
// (METRICS_PORT, bound to METRICS_HOST) it is served as is unless a token is set too.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { AppError } from '../domain/errors.ts';
import type { AppEnv } from '../http/app-env.ts';
import { requestId } from '../http/middleware/request-id.ts';
import { problemResponse } from '../http/problem.ts';
import type { Metrics } from './metrics.ts';
import type { Readiness } from './readiness.ts';

export interface OperatorRouteOptions {
  readiness: Readiness;
  metrics: Metrics;
  /** METRICS_TOKEN, or null. */
  token: string | null;
  /** Serve /metrics without a token (the operator's own listener only). */
  openMetrics: boolean;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  // Digests of equal length: timingSafeEqual leaks neither the token nor its length.
  return m !== null && timingSafeEqual(digest(m[1] ?? ''), digest(token));
}

/** Mounted on an app whose first middleware is requestId() (http/middleware/request-id.ts). */
export function mountOperatorRoutes(app: Hono<AppEnv>, opts: OperatorRouteOptions): void {
  app.get('/readyz', async (c) => {
    const state = await opts.readiness.check();
    if (state.ready) return c.json({ status: 'ready' });
    return problemResponse(new AppError('not-ready', `Not ready (${state.reason}): ${state.detail}.`, { retryAfter: 5 }), c.req.path, c.get('requestId'), {
      'cache-control': 'no-store',
    });
  });
  if (opts.token === null && !opts.openMetrics) return; // not served here: a 404 like any unknown path
  app.get('/metrics', async (c) => {
    if (opts.token !== null && !tokenMatches(c.req.header('authorization'), opts.token)) {
      return problemResponse(new AppError('unauthenticated', '/metrics needs `Authorization: Bearer <METRICS_TOKEN>`.'), c.req.path, c.get('requestId'), {
        'www-authenticate': 'Bearer',
      });
    }
    return c.body(await opts.metrics.render(), 200, { 'content-type': opts.metrics.contentType, 'cache-control': 'no-store' });
  });
}

/** The operator's own listener (METRICS_PORT): /healthz, /readyz and /metrics only. */
export function createOperatorApp(opts: Omit<OperatorRouteOptions, 'openMetrics'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', requestId());
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  mountOperatorRoutes(app, { ...opts, openMetrics: true });
  app.notFound((c) => problemResponse(new AppError('route-not-found', `No operator route at ${c.req.method} ${c.req.path}.`), c.req.path, c.get('requestId')));
  return app;
}
