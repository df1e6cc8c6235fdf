import { describe, expect, it } from 'vitest';
import { addDecimal, compareDecimal, decimalFromNumber, subtractDecimal, addBaseUnits, compareBaseUnits, baseUnitsToDecimal } from './decimal.ts';

const AMOUNT = { maxScale: 8, maxSignificantDigits: 15 };

describe('decimalFromNumber', () => {
  it('keeps the decimal the sender wrote', () => {
    expect(decimalFromNumber(150.25, AMOUNT)).toBe('150.25');
    expect(decimalFromNumber(0.00000001, AMOUNT)).toBe('0.00000001');
    expect(decimalFromNumber(1e-7, AMOUNT)).toBe('0.0000001');
    expect(decimalFromNumber(1000000000000, AMOUNT)).toBe('1000000000000');
    expect(decimalFromNumber(1e21, { maxScale: 8, maxSignificantDigits: 22 })).toBe('1000000000000000000000');
    expect(decimalFromNumber(9999999.99999999, AMOUNT)).toBe('9999999.99999999');
    expect(decimalFromNumber(0.1, AMOUNT)).toBe('0.1');
  });
  it('refuses what cannot be exact or breaks the scale', () => {
    expect(decimalFromNumber(0.1 + 0.2, AMOUNT)).toBeNull();
    expect(decimalFromNumber(0.000000001, AMOUNT)).toBeNull();
    expect(decimalFromNumber(1.005, { maxScale: 2, maxSignificantDigits: 15 })).toBeNull();
    expect(decimalFromNumber(12345678901234.5, AMOUNT)).toBe('12345678901234.5');
    expect(decimalFromNumber(1234567890123.456, AMOUNT)).toBeNull();
    expect(decimalFromNumber(Number.NaN, AMOUNT)).toBeNull();
    expect(decimalFromNumber(Number.POSITIVE_INFINITY, AMOUNT)).toBeNull();
  });
});

describe('decimal arithmetic', () => {
  it('adds and subtracts exactly where floats do not', () => {
    expect(addDecimal('0.1', '0.2')).toBe('0.3');
    expect(subtractDecimal('1000000', '0.00000001')).toBe('999999.99999999');
    expect(subtractDecimal('1', '2.5')).toBe('-1.5');
    expect(addDecimal('99999999999999999999.99999999', '0.00000001')).toBe('100000000000000000000');
    expect(compareDecimal('10', '9.99999999')).toBe(1);
    expect(compareDecimal('1.5', '1.50000000')).toBe(0);
  });
  it('handles base units of any size', () => {
    expect(addBaseUnits('999999999999999999999999', '1')).toBe('1000000000000000000000000');
    expect(compareBaseUnits('100', '99')).toBe(1);
  });
});

describe('baseUnitsToDecimal', () => {
  const rule = { maxScale: 8, maxSignificantDigits: 15, maximum: 1_000_000_000_000 };
  it('gives base units in the asset units, exactly', () => {
    expect(baseUnitsToDecimal('49990000', 6, rule)).toBe('49.99');
    expect(baseUnitsToDecimal('1', 6, rule)).toBe('0.000001');
    expect(baseUnitsToDecimal('1000000000000000000', 18, rule)).toBe('1');
    expect(baseUnitsToDecimal('1500000000000000000', 18, rule)).toBe('1.5');
    expect(baseUnitsToDecimal('12345678', 8, rule)).toBe('0.12345678');
    expect(baseUnitsToDecimal('7', 0, rule)).toBe('7');
  });
  it('answers null rather than round: too many places, digits, or above the maximum', () => {
    expect(baseUnitsToDecimal('1234567890123456789', 18, rule)).toBeNull();
    expect(baseUnitsToDecimal('1', 18, rule)).toBeNull();
    expect(baseUnitsToDecimal('1234567890123456', 0, rule)).toBeNull();
    expect(baseUnitsToDecimal('1000000000001000000', 6, rule)).toBeNull();
    expect(baseUnitsToDecimal('1000000000000000000', 6, rule)).toBe('1000000000000');
  });
});
