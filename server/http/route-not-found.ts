// What an unserved request gets: a known path with another method is 405 method-not-allowed
// naming the allowed methods; anything else is 404 route-not-found. The server and the mock
// (scripts/mock/) answer it alike.
import type { NotFoundHandler } from 'hono';
import { loadOperations, type ApiName } from '../contract/operations.ts';
import { AppError } from '../domain/errors.ts';
import { newRequestId } from '../domain/ids.ts';
import type { AppEnv } from './app-env.ts';
import { problemResponse } from './problem.ts';

export function routeNotFound(apis: readonly ApiName[]): NotFoundHandler<AppEnv> {
  const known = apis.flatMap((api) =>
    loadOperations(api).map((op) => ({ method: op.method.toUpperCase(), pattern: new RegExp(`^${op.honoPath.replace(/:[^/]+/g, '[^/]+')}$`) })),
  );
  return (c) => {
    const requestId = c.get('requestId') ?? newRequestId();
    const allowed = [...new Set(known.filter((k) => k.pattern.test(c.req.path)).map((k) => k.method))];
    if (allowed.length > 0) {
      return problemResponse(new AppError('method-not-allowed', `${c.req.path} accepts ${allowed.join(', ')}, not ${c.req.method}.`), c.req.path, requestId, {
        allow: allowed.join(', '),
      });
    }
    return problemResponse(new AppError('route-not-found', `No operation is served at ${c.req.method} ${c.req.path}.`), c.req.path, requestId);
  };
}
