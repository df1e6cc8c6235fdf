// The request deadline: an operation's answer comes within REQUEST_DEADLINE_MS, whatever the
// store or anything else it waits on does. A request can make several store calls one after
// the other, each bounded by the store's own deadlines; this bounds their sum. Past it the
// handler goes on in the background (its answer is dropped) and the caller hears now:
// - a read (GET, HEAD): 503 store-unavailable, nothing to settle;
// - a write: 504 outcome-unknown, since it may still be stored; the same request again (same
//   Idempotency-Key or thirdPartyId) settles it.
// Not for the event stream, which never ends on its own.
import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../domain/errors.ts';
import { realTimers, type Timers } from '../../timers.ts';
import type { AppEnv } from '../app-env.ts';

export function requestDeadline(ms: number, timers: Timers = realTimers): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let timer: unknown = null;
    const expired = new Promise<'expired'>((resolve) => {
      timer = timers.setTimeout(() => resolve('expired'), ms);
    });
    const handled = next().then(() => 'handled' as const);
    let first: 'handled' | 'expired';
    try {
      first = await Promise.race([handled, expired]);
    } finally {
      timers.clearTimeout(timer);
    }
    if (first === 'handled') return;
    handled.catch(() => undefined); // its error, if any, is no longer anyone's answer
    const read = c.req.method === 'GET' || c.req.method === 'HEAD';
    throw read
      ? new AppError('store-unavailable', `No answer within the request deadline (${ms} ms); nothing was written. Retry in a few seconds.`, { retryAfter: 5 })
      : new AppError('outcome-unknown', `No answer within the request deadline (${ms} ms): the write may or may not be stored. Send the same request again (the same Idempotency-Key or thirdPartyId) to settle it.`, {
          retryAfter: 2,
        });
  };
}
