// The one error type. Domain code throws it with a problem slug from the contract
// (spec/common/problem-types.yaml); the HTTP error handler turns it into problem+json.
import { problemTypes, type ProblemSlug } from '../../generated/problem-types.ts';

export interface FieldError {
  /** JSON pointer prefixed by its location, e.g. /body/amount. */
  pointer: string;
  detail: string;
}

export interface ProblemExtras {
  errors?: FieldError[];
  existingTransactionId?: string;
  rule?: string;
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
