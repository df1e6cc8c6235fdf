// Reads the JSON request body into `body` (415, 413, 400 malformed-json from readJsonBody).
// Mounted only on operations that have a request body: the others ignore any body sent.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { BODY_LIMIT_BYTES, readJsonBody } from '../body.ts';

export function jsonBody(limit: number = BODY_LIMIT_BYTES): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('body', await readJsonBody(c, limit));
    await next();
  };
}
