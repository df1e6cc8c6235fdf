// A timestamp one second past the window's future edge is judged only while the receiver's
// clock cannot have caught up with it: signed during second S with t = S + window + 1, it is
// inside the window from second S + 1 on. A receiver's acceptance that arrived after S ended
// proves nothing against it (a slow receiver, a loaded machine), so the request is made again
// with a new t; a refusal, or an acceptance that came within S, is the verdict.
import type { Exchange } from '../core/check.ts';
import { is2xx } from '../core/http.ts';

/** How many fresh requests an acceptance that came too late to judge gets. */
const TRIES = 3;
/** Past this point in a second, wait for the next one: leaves the answer at least 400 ms. */
const LATEST_START_MS = 600;

/** Waits ms on the real timer: the default of judgedAhead's `wait`. */
const realWait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends `attempt(nowMs)` (which signs with a t derived from nowMs) until its answer can be
 * judged, at most TRIES times, and returns the last exchange. `now` and `wait` are the clock
 * (injected together: a fake clock's wait moves it).
 */
export async function judgedAhead(attempt: (nowMs: number) => Promise<Exchange>, now: () => number = Date.now, wait: (ms: number) => Promise<void> = realWait): Promise<Exchange> {
  let x: Exchange | undefined;
  for (let i = 0; i < TRIES; i += 1) {
    const ms = now() % 1000;
    if (ms > LATEST_START_MS) await wait(1005 - ms);
    const signedAt = now();
    x = await attempt(signedAt);
    const secondEnds = (Math.floor(signedAt / 1000) + 1) * 1000;
    if (!is2xx(x.response) || now() < secondEnds) return x;
  }
  return x!;
}
