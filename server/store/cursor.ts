// Page cursors shared by every Store: the opaque base64url of the last row's monotonic
// sequence number (events.seq, deliveries.seq), tagged with the list that issued it, so that a
// cursor of one list is refused by another (`listEvents#foreign-cursor`): their sequences are
// different counters over the same range of numbers. Newest-first pages continue with `seq < cursor`.
import { InvalidCursorError } from '../domain/store-errors.ts';
import type { Page } from '../domain/store.ts';

/** The lists whose cursors are tagged; the transactions list checks its cursor's row instead. */
export type CursorList = 'events' | 'deliveries';
const TAGS: Record<CursorList, string> = { events: 'e', deliveries: 'd' };

const TEXT = /^(?:([a-z])\.)?([1-9][0-9]{0,15})$/;

export function encodeCursor(seq: number, list?: CursorList): string {
  return Buffer.from(list === undefined ? String(seq) : `${TAGS[list]}.${seq}`, 'utf8').toString('base64url');
}

/**
 * The sequence number a cursor of `list` stands for; throws InvalidCursorError unless this list
 * made it. An untagged cursor is still taken for a tagged list: the release before this one
 * issued them, and a client paging across a rolling upgrade carries one.
 */
export function decodeCursor(cursor: string, list?: CursorList): number {
  const text = /^[A-Za-z0-9_-]{1,32}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const m = TEXT.exec(text);
  const tag = m?.[1];
  const seq = m ? Number(m[2]) : NaN;
  const ours = tag === undefined || (list !== undefined && tag === TAGS[list]);
  // Canonical form only: rejects padding tricks and trailing bits that decode to the same text.
  if (!ours || !Number.isSafeInteger(seq) || encodeCursor(seq, tag === undefined ? undefined : list) !== cursor) throw new InvalidCursorError(cursor);
  return seq;
}

/** Builds a page from up to limit + 1 newest-first rows: the extra row only says there is more. */
export function pageOf<R, T>(rows: R[], limit: number, seqOf: (row: R) => number, map: (row: R) => T, list?: CursorList): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(map), nextCursor: more && last !== undefined ? encodeCursor(seqOf(last), list) : null };
}

export function assertLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`page limit must be a positive integer, got ${limit}`);
}
