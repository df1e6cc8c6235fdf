// JSON numbers of the contract as the exact decimals the domain stores. The router has
// already enforced each field's x-decimal rule; the conversion is checked again here so a
// caller outside HTTP can never slip a rounded binary float into the ledger.
import { decimalFromNumber, type DecimalRule } from '../money.ts';
import { AppError } from '../errors.ts';

/** `Amount`: asset units, at most 8 decimal places and 15 significant digits. */
export const AMOUNT_RULE: DecimalRule = { maxScale: 8, maxSignificantDigits: 15 };
/** `UsdAmount`: US dollars, at most 2 decimal places. */
export const USD_AMOUNT_RULE: DecimalRule = { maxScale: 2, maxSignificantDigits: 15 };

/** The exact decimal string of a positive amount, or a 400 naming the field. */
export function exactAmount(value: number, rule: DecimalRule, pointer: string): string {
  const decimal = decimalFromNumber(value, rule);
  if (decimal === null || !(value > 0)) {
    const detail = `must be greater than 0 with at most ${rule.maxScale} decimal places and ${rule.maxSignificantDigits} significant digits`;
    throw new AppError('validation-failed', `The request is invalid: ${pointer} ${detail}.`, { errors: [{ pointer, detail }] });
  }
  return decimal;
}
