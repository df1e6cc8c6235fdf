// The suite's own reading of an amount against the contract's `x-decimal` rule, written apart
// from the server's money code so that a bug there cannot pass both. A JSON number is judged by
// the shortest decimal that round-trips to it (what JavaScript prints); a string by its digits.

export interface DecimalRule {
  maxScale: number;
  maxSignificantDigits: number;
}

const LITERAL = /^-?(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i;

/** Decimal places and significant digits of a number or decimal string, or null when it is neither. */
export function decimalShape(value: number | string): { scale: number; digits: number } | null {
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  const m = LITERAL.exec(String(value));
  if (!m) return null;
  const [, int = '', frac = '', exp = '0'] = m;
  const digits = int + frac;
  // Digits before the decimal point once the exponent is applied (1.2e-7 → -6, 1e21 → 22).
  const point = int.length + Number(exp);
  const significant = digits.replace(/^0+/, '').length + Math.max(0, point - digits.length);
  return { scale: Math.max(0, digits.length - point), digits: significant };
}

/** Whether `value` keeps within the rule's decimal places and significant digits. */
export function fitsDecimalRule(value: number | string, rule: DecimalRule): boolean {
  const shape = decimalShape(value);
  return shape !== null && shape.scale <= rule.maxScale && shape.digits <= rule.maxSignificantDigits;
}
