// The one error type. Domain code throws it with a problem slug from the contract
// (spec/common/problem-types.yaml); the HTTP error handler turns it into problem+json.
import { problemTypes, type ProblemSlug } from '../../generated/problem-types.ts';
import type { components } from '../../generated/types/transactions.ts';

type Problem = components['schemas']['Problem'];

/** One invalid field: `pointer` is prefixed by its location, e.g. /body/amount. */
export type FieldError = components['schemas']['ProblemFieldError'];

/** The problem's extension members (the contract's `Problem`), and the Retry-After header. */
export interface ProblemExtras extends Pick<Problem, 'errors' | 'existingTransactionId' | 'rule'> {
  /** Seconds to wait (429): sent as the Retry-After header, not in the body. */
  retryAfter?: number;
}

export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly slug: ProblemSlug,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
  ) {
    super(`${slug}: ${detail}`);
  }

  get status(): number {
    return problemTypes[this.slug].status;
  }

  get title(): string {
    return problemTypes[this.slug].title;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
