// The request deadline: an operation's answer comes within REQUEST_DEADLINE_MS, whatever the
// store or anything else it waits on does. A request can make several store calls one after
// the other, each bounded by the store's own deadlines; this bounds their sum. Past it, or
// once the client went away, the request's signal is aborted: its store calls that have not
// started never start (a queued group-commit unit is dropped), one already sent to the database
// finishes or rolls back (RequestStore, the store's CallOptions). The handler's own answer is
// dropped and the caller hears now:
// - a read (GET, HEAD), or a write none of whose store writes may have gone in: 503
//   store-unavailable, nothing to settle;
// - a write that may be stored: 504 outcome-unknown; the same request again (same
//   Idempotency-Key or thirdPartyId) settles it.
// Not for the event stream, which never ends on its own.
import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../domain/errors.ts';
import { realTimers, type Timers } from '../../timers.ts';
import type { AppEnv } from '../app-env.ts';
import { RequestStore } from '../request-store.ts';

export function requestDeadline(ms: number, timers: Timers = realTimers): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const controller = new AbortController();
    const gone = c.req.raw.signal;
    const clientGone = new ClientGone(controller, gone);
    gone.addEventListener('abort', clientGone, { once: true });
    const calls = new RequestStore(controller.signal);
    c.set('storeCalls', calls);
    let timer: unknown = null;
    try {
      const expired = new Promise<'expired'>((resolve) => {
        timer = timers.setTimeout(() => resolve('expired'), ms);
      });
      const handled = next().then(() => 'handled' as const);
      const first = await Promise.race([handled, expired]);
      if (first === 'handled') return;
      handled.catch(() => undefined); // its error, if any, is no longer anyone's answer
      controller.abort(new Error(`request deadline (${ms} ms)`));
      // A call still queued is dropped at the abort: let its rejection reach the count first.
      await new Promise<void>((resolve) => timers.setImmediate(resolve));
      throw answer(ms, c.req.method === 'GET' || c.req.method === 'HEAD' || !calls.mayHaveWritten());
    } finally {
      timers.clearTimeout(timer);
      gone.removeEventListener('abort', clientGone);
    }
  };
}

/**
 * Aborts the request's controller when its client goes away: a listener object, not a closure,
 * since tsx (esbuild's keepNames) names every closure made per request, at a cost per request.
 */
class ClientGone implements EventListenerObject {
  constructor(
    private readonly controller: AbortController,
    private readonly gone: AbortSignal,
  ) {}
  handleEvent(): void {
    this.controller.abort(this.gone.reason);
  }
}

function answer(ms: number, nothingWritten: boolean): AppError {
  return nothingWritten
    ? new AppError('store-unavailable', `No answer within the request deadline (${ms} ms); nothing was written. Retry in a few seconds.`, { retryAfter: 5 })
    : new AppError('outcome-unknown', `No answer within the request deadline (${ms} ms): the write may or may not be stored. Send the same request again (the same Idempotency-Key or thirdPartyId) to settle it.`, {
        retryAfter: 2,
      });
}
