// The one error handler: an AppError becomes its problem+json answer; anything else is a bug,
// logged and answered 500 with only the request id.
import type { ErrorHandler } from 'hono';
import type { Logger } from 'pino';
import { AppError, isAppError } from '../domain/errors.ts';
import { newRequestId } from '../domain/ids.ts';
import type { AppEnv } from './app-env.ts';
import { problemResponse } from './problem.ts';

export function problemErrorHandler(log: Logger): ErrorHandler<AppEnv> {
  return (err, c) => {
    const requestId = c.get('requestId') ?? newRequestId();
    if (isAppError(err)) {
      if (err.status >= 500) log.error({ requestId, err: { message: err.message } }, 'request failed');
      return problemResponse(err, c.req.path, requestId);
    }
    log.error({ requestId, err }, 'unhandled error');
    return problemResponse(new AppError('internal', 'An unexpected error occurred. Quote the request id to support.'), c.req.path, requestId);
  };
}
