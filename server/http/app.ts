// The HTTP application: one port for every API, the developer portal and the docs.
import { Hono, type MiddlewareHandler } from 'hono';
import type { ApiName } from '../contract/operations.ts';
import type { Services } from '../domain/context.ts';
import { newRequestId } from '../domain/ids.ts';
import type { AppEnv } from './app-env.ts';
import { problemErrorHandler } from './errors.ts';
import type { Handler } from './handler-types.ts';
import { registerApi, type RouterOptions } from './router.ts';
import { routeNotFound } from './route-not-found.ts';

export interface AppOptions extends RouterOptions {
  handlers: Partial<Record<ApiName, Record<string, Handler>>>;
  /** Middleware that sees every request first (request metrics). */
  observe?: MiddlewareHandler<AppEnv>;
  /** Extra routes (portal, docs) mounted after the APIs. */
  mount?: (app: Hono<AppEnv>) => void;
}

export function createApp(services: Services, opts: AppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  if (opts.observe) app.use('*', opts.observe);

  // The access log line is built only when its level is on (decided once: pino's level is
  // fixed for the process); at LOG_LEVEL=warn a request pays for its id and nothing else.
  // Every answer carries x-request-id: the contract's operations put it in their answer
  // (router.ts, problem.ts); the rest get it here, after the fact.
  if (services.log.isLevelEnabled('info')) {
    app.use('*', async (c, next) => {
      const requestId = newRequestId();
      c.set('requestId', requestId);
      const started = performance.now();
      await next();
      if (c.get('operationId') === undefined) c.header('x-request-id', requestId);
      services.log.info(
        { requestId, method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round((performance.now() - started) * 10) / 10 },
        'request',
      );
    });
  } else {
    app.use('*', async (c, next) => {
      const requestId = newRequestId();
      c.set('requestId', requestId);
      await next();
      if (c.get('operationId') === undefined) c.header('x-request-id', requestId);
    });
  }

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  for (const [api, handlers] of Object.entries(opts.handlers) as Array<[ApiName, Record<string, Handler>]>) {
    registerApi(app, api, handlers, services, opts);
  }
  opts.mount?.(app);

  app.notFound(routeNotFound(Object.keys(opts.handlers) as ApiName[]));

  app.onError(problemErrorHandler(services.log));

  return app;
}
