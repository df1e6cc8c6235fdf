// The stream cursor's encoding: every cursor the store issues is one it accepts again, within
// the spec's StreamCursor length, even when the opening snapshot was crowded (a busy cluster:
// many transactions running when the stream opened).
import { describe, expect, it } from 'vitest';
import { STREAM_CURSOR_MAX_LENGTH } from '../../../generated/vocabulary.ts';
import { decodeStreamCursor, encodeStreamCursor, positionAfter, type Opening } from './event-stream.ts';

/** An opening whose head cursor (xmin.0~xmax~distances) is as long as the spec allows. */
function crowdedOpening(xmin: bigint): Opening {
  const xmax = xmin + 5000n;
  const running: bigint[] = [];
  for (let x = xmin; x < xmax; x += 37n) {
    const next = [...running, x];
    if (encodeStreamCursor({ tx: xmin, seq: 0, opening: { xmax, running: next } }).length > STREAM_CURSOR_MAX_LENGTH) break;
    running.push(x);
  }
  return { xmax, running };
}

describe('stream cursors', () => {
  it('a head that just fits: the cursor after a row with a long seq still fits and decodes, without the opening', () => {
    const xmin = 7_654_321n;
    const opening = crowdedOpening(xmin);
    const head = encodeStreamCursor({ tx: xmin, seq: 0, opening });
    expect(head.length).toBeGreaterThanOrEqual(STREAM_CURSOR_MAX_LENGTH - 4);
    expect(decodeStreamCursor(head)).toEqual({ tx: xmin, seq: 0, opening });

    const after = positionAfter(xmin, 123_456_789, opening);
    const cursor = encodeStreamCursor(after);
    expect(cursor.length).toBeLessThanOrEqual(STREAM_CURSOR_MAX_LENGTH);
    expect(after.opening).toBeNull();
    expect(decodeStreamCursor(cursor)).toEqual(after);
  });

  it('an opening that fits after the row is kept, with only the running ids at or above the row', () => {
    const opening = { xmax: 1000n, running: [900n, 950n, 990n] };
    const after = positionAfter(950n, 42, opening);
    expect(after).toEqual({ tx: 950n, seq: 42, opening: { xmax: 1000n, running: [950n, 990n] } });
    expect(decodeStreamCursor(encodeStreamCursor(after))).toEqual(after);
  });

  it('a row at or past xmax drops the opening: every later row is later than the opening', () => {
    expect(positionAfter(1000n, 1, { xmax: 1000n, running: [999n] })).toEqual({ tx: 1000n, seq: 1, opening: null });
  });
});
