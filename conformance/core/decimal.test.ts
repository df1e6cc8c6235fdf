import { describe, expect, it } from 'vitest';
import { AMOUNT_RULE, USD_AMOUNT_RULE } from '../../generated/vocabulary.ts';
import { decimalShape, fitsDecimalRule } from './decimal.ts';

describe('the suite’s own x-decimal reading', () => {
  it('counts places and significant digits of numbers as JavaScript prints them, exponents included', () => {
    expect(decimalShape(1.5)).toEqual({ scale: 1, digits: 2 });
    expect(decimalShape(0.00012)).toEqual({ scale: 5, digits: 2 });
    expect(decimalShape(1.2e-7)).toEqual({ scale: 8, digits: 2 });
    expect(decimalShape(1e21)).toEqual({ scale: 0, digits: 22 });
    expect(decimalShape(1000)).toEqual({ scale: 0, digits: 4 });
    expect(decimalShape(Number.NaN)).toBeNull();
  });

  it('reads decimal strings by their digits', () => {
    expect(decimalShape('12.50')).toEqual({ scale: 2, digits: 4 });
    expect(decimalShape('abc')).toBeNull();
  });

  it('holds amounts to the rules of generated/', () => {
    expect(fitsDecimalRule(0.00000001, AMOUNT_RULE)).toBe(true);
    expect(fitsDecimalRule(1e-9, AMOUNT_RULE)).toBe(false);
    expect(fitsDecimalRule(123456789012.345, AMOUNT_RULE)).toBe(true);
    expect(fitsDecimalRule(1234567890123.456, AMOUNT_RULE)).toBe(false);
    expect(fitsDecimalRule(10.25, USD_AMOUNT_RULE)).toBe(true);
    expect(fitsDecimalRule(10.255, USD_AMOUNT_RULE)).toBe(false);
  });
});
