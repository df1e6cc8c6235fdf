// The two answers of a write the server could not see through, one factory each, so the
// status, the problem text's promise and the Retry-After never differ between the places that
// give them (the error handler, the request deadline, the sandbox's rehearsed faults, start-up):
// - store-unavailable (503): nothing was written; retry after 5 s;
// - outcome-unknown (504): the write may be stored; the same request again settles it, after 2 s.
import { AppError } from './errors.ts';

/** Seconds a client waits before retrying a write answered store-unavailable (Retry-After). */
export const STORE_UNAVAILABLE_RETRY_AFTER_S = 5;
/** Seconds a client waits before settling a write answered outcome-unknown (Retry-After). */
export const OUTCOME_UNKNOWN_RETRY_AFTER_S = 2;

/** 503 store-unavailable: `what` happened, and nothing was written. */
export function storeUnavailable(what = 'The data store is unavailable'): AppError {
  return new AppError('store-unavailable', `${what}; nothing was written. Retry in a few seconds.`, { retryAfter: STORE_UNAVAILABLE_RETRY_AFTER_S });
}

/** 504 outcome-unknown: `what` happened to a write that may stand; the same request settles it. */
export function outcomeUnknown(what = 'The connection to the data store was lost while the write was being committed; it may or may not have been stored'): AppError {
  return new AppError('outcome-unknown', `${what}. Send the same request again (the same Idempotency-Key or thirdPartyId) to settle it.`, { retryAfter: OUTCOME_UNKNOWN_RETRY_AFTER_S });
}
