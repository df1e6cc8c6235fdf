// Other spellings of the same JSON value. The service writes compact JSON with keys in the
// spec's order, but verification rules 2 and 3 make the HMAC cover "the exact raw request
// bytes", whatever they are: a receiver that re-serialises, re-encodes or trims the body
// before the HMAC verifies only the one form it happens to reproduce. Each form here parses
// back to the same value and is signed over its own bytes.

export type BodyForm = 'whitespace' | 'key-order' | 'escapes' | 'numbers';

interface Spelling {
  /** Indentation per level; '' writes compact JSON. */
  indent: string;
  /** Reverse the key order of every object. */
  reverseKeys: boolean;
  /** Escape non-ASCII characters and every other ASCII letter of string values as \uXXXX, and '/' as '\/'. */
  escapeStrings: boolean;
  /** Integers as <n>e0, decimals with a trailing 0. */
  respellNumbers: boolean;
}

const SPELLINGS: Record<BodyForm, Spelling> = {
  whitespace: { indent: '  ', reverseKeys: false, escapeStrings: false, respellNumbers: false },
  'key-order': { indent: '', reverseKeys: true, escapeStrings: false, respellNumbers: false },
  escapes: { indent: '', reverseKeys: false, escapeStrings: true, respellNumbers: false },
  numbers: { indent: '', reverseKeys: false, escapeStrings: false, respellNumbers: true },
};

export const BODY_FORMS: Readonly<Record<BodyForm, string>> = {
  whitespace: 'pretty-printed (two-space indent, a space after each colon, CRLF line ends, a trailing newline)',
  'key-order': 'keys of every object in reverse order',
  escapes: 'string characters written as \\uXXXX escapes (every non-ASCII one, every other letter) and "/" as "\\/"',
  numbers: 'numbers spelled differently (4999 as 4999e0, 150.25 as 150.250)',
};

/** The payload in `form`; the bytes differ from compact JSON.stringify and parse to the same value. */
export function spell(payload: unknown, form: BodyForm): Buffer {
  const s = SPELLINGS[form];
  const text = write(payload, s, 0);
  return Buffer.from(form === 'whitespace' ? `${text}\r\n` : text, 'utf8');
}

/** Whether `form` changes anything in this payload (no numbers: `numbers` cannot apply). */
export function applies(payload: unknown, form: BodyForm): boolean {
  return !spell(payload, form).equals(Buffer.from(JSON.stringify(payload), 'utf8'));
}

function write(value: unknown, s: Spelling, depth: number): string {
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') return s.respellNumbers ? respell(value) : JSON.stringify(value);
  if (typeof value === 'string') return s.escapeStrings ? escapeString(value) : JSON.stringify(value);
  const nl = s.indent === '' ? '' : `\r\n${s.indent.repeat(depth + 1)}`;
  const end = s.indent === '' ? '' : `\r\n${s.indent.repeat(depth)}`;
  const colon = s.indent === '' ? ':' : ': ';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${value.map((v) => `${nl}${write(v, s, depth + 1)}`).join(',')}${end}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (s.reverseKeys) entries.reverse();
  if (entries.length === 0) return '{}';
  return `{${entries.map(([k, v]) => `${nl}${JSON.stringify(k)}${colon}${write(v, s, depth + 1)}`).join(',')}${end}}`;
}

function respell(n: number): string {
  const plain = JSON.stringify(n);
  if (!Number.isFinite(n) || /e/i.test(plain)) return plain;
  return Number.isInteger(n) ? `${plain}e0` : `${plain}0`;
}

function escapeString(value: string): string {
  let out = '"';
  let letters = 0;
  for (const ch of value) {
    if (ch === '/') out += '\\/';
    else if (/[A-Za-z]/.test(ch) && letters++ % 2 === 0) out += `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else if (ch.charCodeAt(0) > 0x7e) for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    else out += JSON.stringify(ch).slice(1, -1);
  }
  return `${out}"`;
}
