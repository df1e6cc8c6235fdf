import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time.ts';

const builtin = (ms: number): string => new Date(ms).toISOString();

describe('isoTime', () => {
  it('writes what toISOString writes, at the edges of days, months, leap years and centuries', () => {
    const dates = ['1970-01-01T00:00:00.000Z', '1972-02-29T23:59:59.999Z', '1999-12-31T23:59:59.999Z', '2000-02-29T12:00:00.000Z', '2000-03-01T00:00:00.000Z',
      '2026-11-24T09:08:32.001Z', '2100-02-28T23:59:59.999Z', '2100-03-01T00:00:00.000Z', '2400-02-29T00:00:00.000Z', '9999-12-31T23:59:59.999Z'];
    for (const d of dates) expect(isoTime(Date.parse(d))).toBe(d);
  });

  it('agrees with toISOString on every day from 1970 to 2200 and on random times up to year 9999', () => {
    // The disagreements are collected and compared once: an expect() per time made this a
    // 180 000-assertion test that a loaded machine could not finish within the test timeout.
    const disagreements: Array<{ ms: number; isoTime: string; builtin: string }> = [];
    const compare = (ms: number): void => {
      const ours = isoTime(ms);
      const theirs = builtin(ms);
      if (ours !== theirs) disagreements.push({ ms, isoTime: ours, builtin: theirs });
    };
    let days = 0;
    for (let ms = 0; ms < Date.UTC(2200, 0, 1); ms += 86_400_000 + 3_723_004) {
      compare(ms);
      days += 1;
    }
    // Seeded (a 32-bit LCG per half), so a failure names a time that fails again.
    let seed = 0x2026_1124;
    const next = (): number => (seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0);
    for (let i = 0; i < 100_000; i++) compare((next() * 2 ** 21 + (next() >>> 11)) % 253_402_300_800_000);
    expect(days).toBeGreaterThan(80_000);
    expect(disagreements.slice(0, 10)).toEqual([]);
  });

  it('leaves what it does not cover to the builtin: before 1970, past 9999, fractions, and no time at all', () => {
    for (const ms of [-1, -86_400_001, 253_402_300_800_000, 8.64e15, 1.5]) expect(isoTime(ms)).toBe(builtin(ms));
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
