// The worker's waits: through Timers (../../timers.ts), so tests decide when each one ends.

/** Longest sleep between two looks at the queue (safety net; wake-ups normally come first). */
export const MAX_IDLE_MS = 30_000;
/** First back-off after a store error; doubles up to MAX_ERROR_BACKOFF_MS. */
export const ERROR_BACKOFF_MS = 1_000;
/**
 * Longest back-off after store errors: once the database is back, claims and records resume
 * within this (every try of a store call ends within its deadlines, so trying costs little).
 */
export const MAX_ERROR_BACKOFF_MS = 4_000;

/** The pause before the next try after a store error: ERROR_BACKOFF_MS, doubling up to MAX_ERROR_BACKOFF_MS. */
export function errorBackoff(): { next(): number; reset(): void } {
  let ms = ERROR_BACKOFF_MS;
  return {
    next() {
      const now = ms;
      ms = Math.min(ms * 2, MAX_ERROR_BACKOFF_MS);
      return now;
    },
    reset() {
      ms = ERROR_BACKOFF_MS;
    },
  };
}
