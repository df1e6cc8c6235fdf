import { describe, expect, it } from 'vitest';
import { RETRY_AFTER_CEILING_MS, parseRetryAfter, throttledFor } from './retry-after.ts';

const NOW = Date.UTC(2026, 10, 22, 8, 0, 0);

describe('Retry-After', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('3', NOW)).toBe(3_000);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
  });

  it('reads an HTTP date, in the past as 0', () => {
    expect(parseRetryAfter(new Date(NOW + 90_000).toUTCString(), NOW)).toBe(90_000);
    expect(parseRetryAfter('Sunday, 22-Nov-26 08:00:05 GMT', NOW)).toBe(5_000);
    expect(parseRetryAfter(new Date(NOW - 90_000).toUTCString(), NOW)).toBe(0);
  });

  it('ignores garbage and negative values', () => {
    for (const v of ['', 'soon', '-5', '1.5', '3s', '2026-11-22T08:01:00Z', 'Mon, 99 Foo 2026 99:99:99 GMT', null, undefined]) {
      expect(parseRetryAfter(v, NOW)).toBeNull();
    }
  });

  it('caps a huge value at the ceiling', () => {
    expect(parseRetryAfter('999999999999999999999', NOW)).toBe(RETRY_AFTER_CEILING_MS);
    expect(parseRetryAfter(new Date(NOW + 7 * 86_400_000).toUTCString(), NOW)).toBe(RETRY_AFTER_CEILING_MS);
  });

  it('is honoured on a 429 or a 503 only', () => {
    expect(throttledFor(429, '2', NOW)).toBe(2_000);
    expect(throttledFor(503, '2', NOW)).toBe(2_000);
    expect(throttledFor(500, '2', NOW)).toBeNull();
    expect(throttledFor(200, '2', NOW)).toBeNull();
    expect(throttledFor(null, '2', NOW)).toBeNull();
    expect(throttledFor(429, null, NOW)).toBeNull();
  });
});
