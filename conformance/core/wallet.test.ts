import { describe, expect, it } from 'vitest';
import { fundingLiterals, toUnits } from './wallet.ts';

describe('the amounts a run funds back', () => {
  it('reads a balance exactly, in units of 1e-8', () => {
    expect(toUnits('154129.83332223')).toBe(15412983332223n);
    expect(toUnits('250000')).toBe(25000000000000n);
    expect(toUnits('0.5')).toBe(50000000n);
    expect(toUnits('-1.5')).toBe(-150000000n);
    expect([toUnits('1e5'), toUnits('1.123456789'), toUnits(''), toUnits(null)]).toEqual([null, null, null, null]);
  });

  it('funds the whole part and the fraction apart, never in exponent form', () => {
    expect(fundingLiterals(toUnits('95870.16667777')!)).toEqual(['95870', '0.16667777']);
    expect(fundingLiterals(toUnits('0.00000001')!)).toEqual(['0.00000001']);
    expect(fundingLiterals(toUnits('300.5')!)).toEqual(['300', '0.5']);
    expect(fundingLiterals(toUnits('5000')!)).toEqual(['5000']);
  });
});
