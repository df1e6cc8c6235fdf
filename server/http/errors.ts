// The one error handler: an AppError becomes its problem+json answer; a store that is down,
// full or read-only becomes 503 store-unavailable (the transaction wrote nothing); a write
// whose COMMIT lost its connection becomes 504 outcome-unknown (it may stand); anything else
// is a bug, logged and answered 500 with only the request id. A handler its request deadline
// abandoned (middleware/deadline.ts) answers nobody: its failure, a dropped write's most often,
// is not logged again beside the deadline's own answer; only a bug still is.
import type { ErrorHandler } from 'hono';
import type { Logger } from 'pino';
import { AppError, isAppError } from '../domain/errors.ts';
import { outcomeUnknown, storeUnavailable } from '../domain/outcomes.ts';
import { newRequestId } from '../domain/ids.ts';
import type { AppEnv } from './app-env.ts';
import { isRead } from './methods.ts';
import { problemResponse } from './problem.ts';
import { isStoreUnavailable, unavailableReason } from '../domain/store-unavailable.ts';
import { OutcomeUnknown } from '../domain/store-errors.ts';

export function problemErrorHandler(log: Logger): ErrorHandler<AppEnv> {
  return (err, c) => {
    const requestId = c.get('requestId') ?? newRequestId();
    const calls = c.get('storeCalls');
    if (calls?.abandoned && err !== calls.answer) return abandoned(log, err, requestId);
    if (isAppError(err)) {
      if (err.status >= 500) log.error({ requestId, err: { message: err.message } }, 'request failed');
      return problemResponse(err, c.req.path, requestId);
    }
    // A lost COMMIT: the write may stand. A read has nothing to settle: it is just unavailable.
    if (err instanceof OutcomeUnknown && !isRead(c.req.method)) {
      log.warn({ requestId, reason: unavailableReason(err.cause) }, 'store write outcome unknown');
      return problemResponse(outcomeUnknown(), c.req.path, requestId);
    }
    if (isStoreUnavailable(err) || err instanceof OutcomeUnknown) {
      log.warn({ requestId, reason: unavailableReason(err) }, 'store unavailable');
      return problemResponse(storeUnavailable(), c.req.path, requestId);
    }
    log.error({ requestId, err }, 'unhandled error');
    return problemResponse(new AppError('internal', 'An unexpected error occurred. Quote the request id to support.'), c.req.path, requestId);
  };
}

/**
 * The end of a handler whose request the deadline answers: logged only when it is a bug. What
 * it returns is sent to nobody (the deadline's answer replaces it, or was sent already); the
 * answer itself is not returned, as Hono would rebuild it around its body, read by then.
 */
function abandoned(log: Logger, err: Error, requestId: string): Response {
  if (!isAppError(err) && !isStoreUnavailable(err) && !(err instanceof OutcomeUnknown)) log.error({ requestId, err }, 'unhandled error after the request deadline answered');
  return new Response(null, { status: 503 });
}
