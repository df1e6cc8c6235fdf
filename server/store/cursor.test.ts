// Page cursors: each list refuses another's (their sequences are different counters over the
// same numbers), takes the untagged cursors of the release before, and only the canonical form.
import { describe, expect, it } from 'vitest';
import { InvalidCursorError } from '../domain/store-errors.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

describe('page cursors', () => {
  it('a list takes back what it issued', () => {
    expect(decodeCursor(encodeCursor(42, 'events'), 'events')).toBe(42);
    expect(decodeCursor(encodeCursor(42, 'deliveries'), 'deliveries')).toBe(42);
    expect(decodeCursor(encodeCursor(9_007_199_254_740_991, 'events'), 'events')).toBe(9_007_199_254_740_991);
  });

  it("refuses another list's cursor, and the untagged transactions list refuses tagged ones", () => {
    expect(() => decodeCursor(encodeCursor(42, 'deliveries'), 'events')).toThrow(InvalidCursorError);
    expect(() => decodeCursor(encodeCursor(42, 'events'), 'deliveries')).toThrow(InvalidCursorError);
    expect(() => decodeCursor(encodeCursor(42, 'events'))).toThrow(InvalidCursorError);
    expect(() => decodeCursor(b64('x.42'), 'events')).toThrow(InvalidCursorError);
  });

  it('takes an untagged cursor of the release before (a client paging across a rolling upgrade)', () => {
    expect(decodeCursor(b64('42'), 'events')).toBe(42);
    expect(decodeCursor(b64('42'), 'deliveries')).toBe(42);
    expect(decodeCursor(b64('42'))).toBe(42);
  });

  it('refuses what it could not have made: forged text, zero, leading zeros, padding, trailing bits', () => {
    for (const bad of [b64('forged-cursor'), b64('e.0'), b64('e.042'), `${b64('e.42')}=`, encodeCursor(42, 'events').slice(0, -1) + 'z', b64('e.12345678901234567'), '', 'a'.repeat(33)]) {
      expect(() => decodeCursor(bad, 'events'), bad).toThrow(InvalidCursorError);
    }
  });
});
