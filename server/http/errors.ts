// The one error handler: an AppError becomes its problem+json answer; a store that is down,
// full or read-only becomes 503 store-unavailable (the transaction wrote nothing); a write
// whose COMMIT lost its connection becomes 504 outcome-unknown (it may stand); anything else
// is a bug, logged and answered 500 with only the request id.
import type { ErrorHandler } from 'hono';
import type { Logger } from 'pino';
import { AppError, isAppError } from '../domain/errors.ts';
import { newRequestId } from '../domain/ids.ts';
import type { AppEnv } from './app-env.ts';
import { problemResponse } from './problem.ts';
import { isStoreUnavailable, unavailableReason } from '../domain/store-unavailable.ts';
import { OutcomeUnknown } from '../domain/store-errors.ts';

const UNAVAILABLE = 'The data store is unavailable; nothing was written. Retry in a few seconds.';
const UNKNOWN =
  'The connection to the data store was lost while the write was being committed; it may or may not have been stored. Send the same request again (the same Idempotency-Key or thirdPartyId) to settle it.';

export function problemErrorHandler(log: Logger): ErrorHandler<AppEnv> {
  return (err, c) => {
    const requestId = c.get('requestId') ?? newRequestId();
    if (isAppError(err)) {
      if (err.status >= 500) log.error({ requestId, err: { message: err.message } }, 'request failed');
      return problemResponse(err, c.req.path, requestId);
    }
    // A lost COMMIT: the write may stand. A read has nothing to settle: it is just unavailable.
    if (err instanceof OutcomeUnknown && c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      log.warn({ requestId, reason: unavailableReason(err.cause) }, 'store write outcome unknown');
      return problemResponse(new AppError('outcome-unknown', UNKNOWN, { retryAfter: 2 }), c.req.path, requestId);
    }
    if (isStoreUnavailable(err) || err instanceof OutcomeUnknown) {
      log.warn({ requestId, reason: unavailableReason(err) }, 'store unavailable');
      return problemResponse(new AppError('store-unavailable', UNAVAILABLE, { retryAfter: 5 }), c.req.path, requestId);
    }
    log.error({ requestId, err }, 'unhandled error');
    return problemResponse(new AppError('internal', 'An unexpected error occurred. Quote the request id to support.'), c.req.path, requestId);
  };
}
