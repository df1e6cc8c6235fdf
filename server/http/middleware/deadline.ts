// The request deadline: an operation's answer comes within REQUEST_DEADLINE_MS, whatever the
// store or anything else it waits on does. A request can make several store calls one after
// the other, each bounded by the store's own deadlines; this bounds their sum. Past it, or
// once the client went away, the request's signal is aborted: its store calls that have not
// started never start (a queued group-commit unit is dropped), one already sent to the database
// finishes or rolls back (StoreCalls, the store's CallOptions). The handler's own answer is
// dropped and the caller hears now:
// - a read (GET, HEAD), or a write none of whose store writes may have gone in: 503
//   store-unavailable, nothing to settle;
// - a write that may be stored: 504 outcome-unknown; the same request again (same
//   Idempotency-Key or thirdPartyId) settles it.
// The handler, abandoned, may still fail later: that is nobody's answer, and not logged again
// (http/errors.ts). Not for the event stream, which never ends on its own.
import type { MiddlewareHandler } from 'hono';
import type { AppError } from '../../domain/errors.ts';
import { outcomeUnknown, storeUnavailable } from '../../domain/outcomes.ts';
import { realTimers, type Timers } from '../../timers.ts';
import type { AppEnv } from '../app-env.ts';
import { isRead } from '../methods.ts';
import { StoreCalls } from '../store-calls.ts';

export function requestDeadline(ms: number, timers: Timers = realTimers): MiddlewareHandler<AppEnv> {
  return async function requestDeadline(c, next) {
    const calls = new StoreCalls(c.req.raw, !isRead(c.req.method));
    c.set('storeCalls', calls);
    try {
      if (!(await expires(next(), ms, timers))) return;
      calls.abandoned = true;
      calls.abort(new Error(`request deadline (${ms} ms)`));
      // A call still queued is dropped at the abort: let its rejection reach the count first.
      await new Promise<void>((resolve) => timers.setImmediate(resolve));
      throw (calls.answer = answer(ms, !calls.countsWrites || !calls.mayHaveWritten()));
    } finally {
      calls.end();
    }
  };
}

/**
 * Whether `handled` is overtaken by the deadline: true once ms passed first, false when it
 * settled in time (its rejection goes up). One promise and one timer a request, cleared in time.
 */
function expires(handled: Promise<void>, ms: number, timers: Timers): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const timer = timers.setTimeout(() => resolve(true), ms);
    handled.then(
      () => {
        timers.clearTimeout(timer);
        resolve(false);
      },
      (err: unknown) => {
        timers.clearTimeout(timer);
        reject(err);
      },
    );
  });
}

function answer(ms: number, nothingWritten: boolean): AppError {
  return nothingWritten
    ? storeUnavailable(`No answer within the request deadline (${ms} ms)`)
    : outcomeUnknown(`No answer within the request deadline (${ms} ms): the write may or may not be stored`);
}
