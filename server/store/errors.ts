// Errors a Store throws besides UniqueViolation (which lives in types.ts). Every
// implementation throws these same classes, so callers never see a driver's error for them.

/** A page cursor that this store did not hand out (malformed, tampered with, truncated). */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
  constructor(readonly cursor: string) {
    super('invalid page cursor');
  }
}
