// The `Prefer` header (RFC 7240) as the mock reads it: `code=404`, `example=<name>`,
// `dynamic=true`, as Prism's own server reads them. A preference the operation cannot honour
// (a status it does not document, an example it does not name) is ignored, as RFC 7240 has a
// server do, and said in the mock's log: no answer carries a status the contract does not
// document for the operation.
import type { Preferences } from './prism.ts';

type Obj = Record<string, unknown>;

/** An operation's documented statuses, each with the names of its examples. */
export type Documented = ReadonlyMap<string, readonly string[]>;

export function documentedAnswers(operation: Obj): Documented {
  const responses = (operation.responses ?? {}) as Record<string, Obj>;
  return new Map(
    Object.entries(responses).map(([status, r]) => [status, Object.values((r.content ?? {}) as Record<string, Obj>).flatMap((media) => Object.keys((media.examples ?? {}) as Obj))]),
  );
}

/** The header's `name=value` pairs (names lower-cased; quotes dropped). */
export function parsePrefer(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(/[,;]/)) {
    const [name, ...rest] = part.split('=');
    const key = name?.trim().toLowerCase();
    if (key) out[key] = rest.join('=').trim().replace(/^"(.*)"$/, '$1');
  }
  return out;
}

export interface Honoured {
  prefer: Preferences;
  /** What was asked and not honoured, with why; null when all was. */
  ignored: string | null;
}

/** The preferences of `header` the operation documents: a named example implies its status. */
export function honouredPreferences(header: string | undefined, documented: Documented): Honoured {
  const asked = parsePrefer(header);
  const prefer: Preferences = {};
  const ignored: string[] = [];
  if (asked.dynamic !== undefined) prefer.dynamic = asked.dynamic === 'true';
  const code = asked.code;
  if (code !== undefined) {
    if (documented.has(code)) prefer.code = Number(code);
    else ignored.push(`code=${code} (documented: ${[...documented.keys()].join(', ')})`);
  }
  const example = asked.example;
  if (example !== undefined) {
    const statuses = [...documented].filter(([status, names]) => names.includes(example) && (prefer.code === undefined || String(prefer.code) === status)).map(([status]) => status);
    if (statuses[0] !== undefined) {
      prefer.example = example;
      prefer.code = Number(statuses[0]);
    } else {
      const names = [...documented].flatMap(([status, list]) => list.map((n) => `${status} ${n}`));
      ignored.push(`example=${example} (documented: ${names.join(', ') || 'none'})`);
    }
  }
  return { prefer, ignored: ignored.length === 0 ? null : ignored.join('; ') };
}
