// The HTTP application: one port for every API, the developer portal and the docs.
import { Hono, type MiddlewareHandler } from 'hono';
import type { ApiName } from '../contract/operations.ts';
import type { Services } from '../domain/context.ts';
import type { AppEnv } from './app-env.ts';
import { problemErrorHandler } from './errors.ts';
import { requestId } from './middleware/request-id.ts';
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

  app.use('*', requestId({ log: services.log }));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  for (const [api, handlers] of Object.entries(opts.handlers) as Array<[ApiName, Record<string, Handler>]>) {
    registerApi(app, api, handlers, services, opts);
  }
  opts.mount?.(app);

  app.notFound(routeNotFound(Object.keys(opts.handlers) as ApiName[]));

  app.onError(problemErrorHandler(services.log));

  return app;
}
