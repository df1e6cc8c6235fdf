// The one clock every span of ours is timed with (explicit start and end times). The SDK times
// a span from Date.now() (whole milliseconds) when it starts plus the monotonic clock after, each
// span anchored on its own: a group commit's wait, measured by the committer, and the store
// call around it could then overlap by a rounding. Here the monotonic clock is anchored to the
// wall clock once a minute at most (so NTP's slewing is followed), and every span of one
// request, the committer's included, reads the same anchor: parents enclose their children.

/** Re-anchored no more often than this, so spans across a re-anchoring disagree by a slew of at most a minute's. */
const ANCHOR_MS = 60_000;

let anchoredAt = performance.now();
let anchor = Date.now() - anchoredAt;

/** Epoch milliseconds (fractional) of `perfMs`, a performance.now() reading. */
export function epochAt(perfMs: number): number {
  if (perfMs - anchoredAt > ANCHOR_MS) {
    anchoredAt = performance.now();
    anchor = Date.now() - anchoredAt;
  }
  return anchor + perfMs;
}

/** Epoch milliseconds (fractional), now. */
export function epochNow(): number {
  return epochAt(performance.now());
}
