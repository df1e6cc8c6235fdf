// The request id, first of all middleware: every log line and problem of the request quotes it.
// Every answer carries x-request-id: the contract's operations put it in their answer
// (router.ts, problem.ts); the rest get it here, after the fact. Given a log whose info level is
// on, one access line per request; whether it is on is decided once (pino's level is fixed for
// the process), so at LOG_LEVEL=warn a request pays for its id and nothing else.
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { newRequestId } from '../../domain/ids.ts';
import type { AppEnv } from '../app-env.ts';

export interface RequestIdOptions {
  /** Where the access line goes; none without it. */
  log?: Logger;
  /** Makes the ids; default `newRequestId` (tests fix one). */
  newId?: () => string;
}

export function requestId(opts: RequestIdOptions = {}): MiddlewareHandler<AppEnv> {
  const newId = opts.newId ?? newRequestId;
  const access = opts.log?.isLevelEnabled('info') ? opts.log : null;
  return async (c, next) => {
    const id = newId();
    c.set('requestId', id);
    const started = access ? performance.now() : 0;
    await next();
    if (c.get('operationId') === undefined) c.header('x-request-id', id);
    access?.info({ requestId: id, method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request');
  };
}
