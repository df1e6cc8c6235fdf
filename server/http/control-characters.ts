// NUL characters in strings are refused at the edge: no field of the contract can carry one,
// PostgreSQL text cannot store one, and a log or a terminal may cut a value at one.
import type { FieldIssue } from '../contract/ajv.ts';

/**
 * Every NUL in `value` (its strings and property names) as an issue under `pointer`, added to
 * `out`. Nearly every request has none: that is found without building a pointer per property.
 */
export function nulIssues(value: unknown, pointer: string, out: FieldIssue[] = []): FieldIssue[] {
  return hasNul(value) ? collect(value, pointer, out) : out;
}

/** Whether a string of `value`, or a property name in it, holds a NUL. */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const v of value) if (hasNul(v)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const k of Object.keys(record)) if (k.includes('\u0000') || hasNul(record[k])) return true;
  return false;
}

function collect(value: unknown, pointer: string, out: FieldIssue[]): FieldIssue[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push({ pointer, detail: 'must not contain NUL characters' });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => collect(v, `${pointer}/${i}`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const escaped = k.replace(/~/g, '~0').replace(/\//g, '~1');
      if (k.includes('\u0000')) out.push({ pointer: `${pointer}/${escaped}`, detail: 'property names must not contain NUL characters' });
      collect(v, `${pointer}/${escaped}`, out);
    }
  }
  return out;
}
