// Exact decimal arithmetic for amounts: values are decimal strings scaled to 8 places in
// BigInt. Nothing here goes through binary floating point except the one checked conversion
// from a JSON number, which is only accepted when it round-trips exactly.

export const SCALE = 8;
const FACTOR = 10n ** BigInt(SCALE);
const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,8}))?$/;

export interface DecimalRule {
  maxScale: number;
  maxSignificantDigits: number;
}

/**
 * The exact decimal a JSON number stands for, or null when it has more decimal places or
 * significant digits than the rule allows (then the sender's literal may not be exact).
 * JavaScript prints the shortest string that round-trips, which for a number of at most 15
 * significant digits is the decimal the sender wrote (canonicalised: 1.50 → "1.5").
 */
export function decimalFromNumber(value: number, rule: DecimalRule): string | null {
  if (!Number.isFinite(value)) return null;
  const text = plainDecimal(value);
  if (text === null) return null;
  const [int = '', frac = ''] = text.replace('-', '').split('.');
  if (frac.length > rule.maxScale) return null;
  const digits = (int + frac).replace(/^0+/, '');
  if (digits.length > rule.maxSignificantDigits) return null;
  return text;
}

/** Shortest round-trip decimal of a number, without exponent notation. */
function plainDecimal(value: number): string | null {
  const s = String(value);
  if (!/e/i.test(s)) return s;
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/i.exec(s);
  if (!m) return null;
  const [, sign = '', lead = '', rest = '', expText = '0'] = m;
  const exp = Number(expText);
  const digits = lead + rest;
  if (exp >= 0) {
    const intLen = 1 + exp;
    const int = digits.length > intLen ? digits.slice(0, intLen) : digits.padEnd(intLen, '0');
    const frac = digits.slice(intLen);
    return sign + int + (frac ? `.${frac}` : '');
  }
  return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
}

export function isDecimal(value: string): boolean {
  return DECIMAL.test(value);
}

function toUnits(value: string): bigint {
  const negative = value.startsWith('-');
  const m = DECIMAL.exec(negative ? value.slice(1) : value);
  if (!m) throw new RangeError(`not a decimal: ${value}`);
  const units = BigInt(m[1] ?? '0') * FACTOR + BigInt((m[2] ?? '').padEnd(SCALE, '0') || '0');
  return negative ? -units : units;
}

function fromUnits(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const int = abs / FACTOR;
  const frac = (abs % FACTOR).toString().padStart(SCALE, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

export function addDecimal(a: string, b: string): string {
  return fromUnits(toUnits(a) + toUnits(b));
}

export function subtractDecimal(a: string, b: string): string {
  return fromUnits(toUnits(a) - toUnits(b));
}

export function compareDecimal(a: string, b: string): -1 | 0 | 1 {
  const d = toUnits(a) - toUnits(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

export function negateDecimal(a: string): string {
  return fromUnits(-toUnits(a));
}

/** A decimal string as the JSON number of a response. Exact: stored amounts have ≤ 15 significant digits. */
export function decimalToNumber(value: string): number {
  return Number(value);
}

// ---- Token base units: non-negative integers as decimal strings -------------------------

export function addBaseUnits(a: string, b: string): string {
  return (BigInt(a) + BigInt(b)).toString();
}

export function subtractBaseUnits(a: string, b: string): string {
  return (BigInt(a) - BigInt(b)).toString();
}

export function compareBaseUnits(a: string, b: string): -1 | 0 | 1 {
  const d = BigInt(a) - BigInt(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/**
 * A token amount in base units as the exact decimal in the asset's units (base / 10^decimals),
 * or null when that decimal breaks the rule (more decimal places or significant digits, or
 * above `maximum`): then base units are the only exact form, and nothing is rounded.
 */
export function baseUnitsToDecimal(baseUnits: string, decimals: number, rule: DecimalRule & { maximum: number }): string | null {
  const digits = BigInt(baseUnits).toString();
  const padded = digits.padStart(decimals + 1, '0');
  const int = padded.slice(0, padded.length - decimals);
  const frac = padded.slice(padded.length - decimals).replace(/0+$/, '');
  if (frac.length > rule.maxScale) return null;
  if ((int + frac).replace(/^0+/, '').length > rule.maxSignificantDigits) return null;
  const text = frac ? `${int}.${frac}` : int;
  return compareDecimal(text, String(rule.maximum)) > 0 ? null : text;
}
