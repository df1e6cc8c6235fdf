// Page cursors shared by every Store: the opaque base64url of the last row's monotonic
// sequence number (events.seq, deliveries.seq). Newest-first pages continue with `seq < cursor`.
import { InvalidCursorError } from '../domain/store-errors.ts';
import type { Page } from '../domain/store.ts';

const SEQ = /^[1-9][0-9]{0,15}$/;

export function encodeCursor(seq: number): string {
  return Buffer.from(String(seq), 'utf8').toString('base64url');
}

/** The sequence number a cursor stands for; throws InvalidCursorError unless we made it. */
export function decodeCursor(cursor: string): number {
  const text = /^[A-Za-z0-9_-]{1,24}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const seq = SEQ.test(text) ? Number(text) : NaN;
  // Canonical form only: rejects padding tricks and trailing bits that decode to the same text.
  if (!Number.isSafeInteger(seq) || encodeCursor(seq) !== cursor) throw new InvalidCursorError(cursor);
  return seq;
}

/** Builds a page from up to limit + 1 newest-first rows: the extra row only says there is more. */
export function pageOf<R, T>(rows: R[], limit: number, seqOf: (row: R) => number, map: (row: R) => T): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(map), nextCursor: more && last !== undefined ? encodeCursor(seqOf(last)) : null };
}

export function assertLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`page limit must be a positive integer, got ${limit}`);
}
