// JSON numbers of the contract as the exact decimals the domain stores. The router has
// already enforced each field's x-decimal rule; the conversion is checked again here so a
// caller outside HTTP can never slip a rounded binary float into the ledger. The rules are the
// spec's (AMOUNT_RULE, USD_AMOUNT_RULE in generated/vocabulary.ts).
import { decimalFromNumber, type DecimalRule } from '../../money/decimal.ts';
import { AppError } from '../errors.ts';

/** The exact decimal string of a positive amount, or a 400 naming the field. */
export function exactAmount(value: number, rule: DecimalRule, pointer: string): string {
  const decimal = decimalFromNumber(value, rule);
  if (decimal === null || !(value > 0)) {
    const detail = `must be greater than 0 with at most ${rule.maxScale} decimal places and ${rule.maxSignificantDigits} significant digits`;
    throw new AppError('validation-failed', `The request is invalid: ${pointer} ${detail}.`, { errors: [{ pointer, detail }] });
  }
  return decimal;
}
