// Rule 6 on a retry: `t` describes the attempt, so an attempt signed at least a second after an
// earlier one carries a later `t`. The suite knows a lower bound of when an attempt can have
// been signed (not before the earlier attempt was answered, cut or manually retried: a sender
// retries only after it learns of the failure) and an upper bound of when the earlier one was
// (before it arrived). When these are a second or more apart, whole-second `t` values must
// differ; closer attempts cannot be told apart and are not judged.
import type { Received } from './receiver.ts';
import { setTimestamps } from './verify.ts';

/** `t` counts whole seconds: signings at least this far apart carry different `t`. */
export const DISTINGUISHABLE_MS = 1_000;
/** How long the suite holds a failing answer so that the retry is distinguishable (a margin over a second for timer rounding). */
export const FAILING_ANSWER_HOLD_MS = 1_200;

/**
 * Why `later` does not carry a `t` later than `earlier`'s, or null (fine, or too close to tell).
 * `laterNotBeforeMono`: the monotonic time before which `later` cannot have been signed.
 */
export function staleTimestamp(earlier: Received, later: Received, laterNotBeforeMono: number | undefined): string | null {
  if (laterNotBeforeMono === undefined || laterNotBeforeMono - earlier.receivedMono < DISTINGUISHABLE_MS) return null;
  const apart = ((laterNotBeforeMono - earlier.receivedMono) / 1000).toFixed(1);
  // Each header set on its own: in `both`, a fresh Service-Signature does not excuse a reused webhook-timestamp.
  const [a, b] = [setTimestamps(earlier), setTimestamps(later)];
  for (const [set, name] of [['service', 't'], ['standard', 'webhook-timestamp']] as const) {
    const [t1, t2] = [a[set], b[set]];
    if (t1 === null || t2 === null || t2 > t1) continue;
    return `${name}=${t2} is not later than the earlier attempt's ${name}=${t1}, although it was sent at least ${apart} s after that attempt arrived: each attempt is signed anew with its own time (an old timestamp makes the receiver reject the retry as stale once 300 s have passed)`;
  }
  return null;
}

/** When the sender learned that `attempt` failed: the suite's answer, or its cutting the held connection. */
export function failureKnownMono(attempt: Received): number | undefined {
  return attempt.answeredMono ?? attempt.closedMono;
}
