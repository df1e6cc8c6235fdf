// NUL characters in strings are refused at the edge: no field of the contract can carry one,
// PostgreSQL text cannot store one, and a log or a terminal may cut a value at one.
import type { FieldIssue } from '../contract/ajv.ts';

export function nulIssues(value: unknown, pointer: string, out: FieldIssue[] = []): FieldIssue[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push({ pointer, detail: 'must not contain NUL characters' });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => nulIssues(v, `${pointer}/${i}`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const escaped = k.replace(/~/g, '~0').replace(/\//g, '~1');
      if (k.includes('\u0000')) out.push({ pointer: `${pointer}/${escaped}`, detail: 'property names must not contain NUL characters' });
      nulIssues(v, `${pointer}/${escaped}`, out);
    }
  }
  return out;
}
