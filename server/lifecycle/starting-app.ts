// What the public port answers before the store is open: liveness, readiness with the reason,
// and 503 store-unavailable (problem+json, Retry-After) for everything else, so a load
// balancer that routes too early gets a retryable answer instead of a refused connection.
import { Hono } from 'hono';
import type { Config } from '../config.ts';
import { storeUnavailable } from '../domain/outcomes.ts';
import type { AppEnv } from '../http/app-env.ts';
import { requestId } from '../http/middleware/request-id.ts';
import { problemResponse } from '../http/problem.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Readiness } from '../observability/readiness.ts';
import { mountOperatorRoutes } from '../observability/routes.ts';

export function createStartingApp(config: Config, readiness: Readiness, metrics: Metrics): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', requestId());
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  mountOperatorRoutes(app, { readiness, metrics, token: config.metrics.token, openMetrics: false });
  app.all('*', (c) => {
    const state = readiness.current();
    const why = state.ready ? 'starting' : state.detail;
    return problemResponse(storeUnavailable(`The instance is not serving yet (${why})`), c.req.path, c.get('requestId'));
  });
  return app;
}
