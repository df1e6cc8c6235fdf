// A receiver's `Retry-After` (RFC 9110 §10.2.3) on a 429 or 503: delta-seconds or an HTTP date.
// It is the receiver's word, so WEBHOOK_RETRY_SCALE never shortens it (schedule.ts scales only
// our own delays); RETRY_AFTER_CEILING_MS bounds it, so a receiver cannot park a delivery (and
// its endpoint) for a week with one header. spec/README.md "Back-pressure from the receiver".

const SECOND = 1000;
/** The longest a Retry-After holds a delivery and its endpoint back: one hour. */
export const RETRY_AFTER_CEILING_MS = 60 * 60 * SECOND;
/** The answers whose Retry-After is honoured. */
export const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);

const DELTA_SECONDS = /^\d+$/;
// IMF-fixdate, obsolete RFC 850 and asctime forms all start with a day name; anything else
// Date.parse would accept (ISO strings, bare numbers) is not an HTTP date.
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;

/**
 * How long to wait, in ms from `now`, as a Retry-After value says: between 0 and the ceiling,
 * or null when the value is absent or not one of the two forms (garbage, a negative number).
 */
export function parseRetryAfter(value: string | null | undefined, now: number, ceilingMs = RETRY_AFTER_CEILING_MS): number | null {
  if (value === null || value === undefined) return null;
  const v = value.trim();
  if (DELTA_SECONDS.test(v)) return Math.min(ceilingMs, Number(v) * SECOND);
  if (!HTTP_DATE.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.min(ceilingMs, Math.max(0, at - now));
}

/** The wait a throttled answer asks for (429 or 503 with a usable Retry-After), or null. */
export function throttledFor(statusCode: number | null, retryAfter: string | null | undefined, now: number): number | null {
  if (statusCode === null || !RETRY_AFTER_STATUSES.has(statusCode)) return null;
  return parseRetryAfter(retryAfter, now);
}
