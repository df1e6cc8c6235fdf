// Names the contract operation being served, for what runs around the route (request metrics
// label requests by operation, never by raw path, so ids and tenants stay out of labels).
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';

export function operation(operationId: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('operationId', operationId);
    await next();
  };
}
