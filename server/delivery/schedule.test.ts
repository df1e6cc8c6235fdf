import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, nextAttemptAt } from './schedule.ts';

describe('retry schedule', () => {
  it('follows 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h without jitter at the midpoint', () => {
    const delays = Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => (nextAttemptAt(i + 1, 0, { scale: 1, random: () => 0.5 }) ?? -1));
    expect(delays).toEqual([5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000]);
    expect(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0)).toBeGreaterThan(15.5 * 3_600_000);
  });
  it('stops after the tenth attempt', () => {
    expect(nextAttemptAt(10, 0, { scale: 1 })).toBeNull();
  });
  it('jitters within ±20 %', () => {
    expect(nextAttemptAt(1, 1000, { scale: 1, random: () => 0 })).toBe(1000 + 4_000);
    expect(nextAttemptAt(1, 1000, { scale: 1, random: () => 0.999999 })).toBe(1000 + 6_000);
  });
  it('scales for development and tests', () => {
    expect(nextAttemptAt(9, 0, { scale: 0.001, random: () => 0.5 })).toBe(28_800);
  });
});
