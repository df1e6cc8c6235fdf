// Errors a Store throws besides UniqueViolation (which lives in store.ts): part of the port.
// Every implementation throws these same classes, so callers never see a driver's error for them.

/** The store's own refusals (admission control, a cancelled call): nothing was written, 503. */
export const OVERLOADED = 'EOVERLOADED';

/** A page cursor that this store did not hand out (malformed, tampered with, truncated). */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
  constructor(readonly cursor: string) {
    super('invalid page cursor');
  }
}

/**
 * A write whose outcome the store cannot know: the connection was lost after COMMIT (or a
 * statement that commits by itself) was sent, and before its answer came. It may or may not
 * have been committed. Not "unavailable": that promises nothing was written. The caller settles
 * it by sending the same request again (an order's Idempotency-Key, a payout's thirdPartyId).
 */
export class OutcomeUnknown extends Error {
  override readonly name = 'OutcomeUnknown';
  constructor(override readonly cause: unknown) {
    super('the connection was lost after the write was sent to be committed; it may or may not have been committed');
  }
}

/**
 * The caller's signal was aborted (its request's deadline passed, its client went away) before
 * the call was started: nothing was written. Its code is the store's "cannot serve now" one, so
 * it is a 503 should anyone still hear it.
 */
export class CallCancelled extends Error {
  override readonly name = 'CallCancelled';
  readonly code = OVERLOADED;
  constructor() {
    super('the store call was cancelled by its caller before it started: nothing was written');
  }
}
