// `Prefer: dynamic=true` spends most of its time in json-schema-faker's copy of randexp, which
// parses a pattern again on every string it generates and rebuilds each character class
// (a DRange) for every character: a 64-character hex id costs 64 class expansions. The
// dependency is pinned by Prism (0.5.8) and offers no hook, so the mock loads it itself, its
// text patched, before Prism requires it (Prism then gets it from the require cache): one
// RandExp per pattern, one expansion per class token. Values are drawn exactly as before, from
// the same random source (randInt is still read from the prototype that json-schema-faker sets
// before every call).
//
// A json-schema-faker whose text differs is loaded unpatched by Prism (slower, never wrong);
// randexp-cache.test.ts fails on the installed one so an upgrade is noticed.
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';

const EDITS: ReadonlyArray<readonly [string, string]> = [
  // One expansion per class token: a token belongs to one RandExp, whose ignoreCase and
  // defaultRange never change, and the expansion is only read (randomly indexed).
  ['    var types2 = ret.types;\n', '    var types2 = ret.types;\n    var EXPANDED = new WeakMap();\n'],
  [
    '      _expand(token) {\n',
    '      _expand(token) {\n        let memo = EXPANDED.get(token);\n        if (memo === void 0) EXPANDED.set(token, memo = this._expandOnce(token));\n        return memo;\n      }\n      _expandOnce(token) {\n',
  ],
  // One RandExp per pattern and length bound (the instance keeps the `max` it was made with).
  ['function _randexp(value) {\n', 'var RANDEXPS = new Map();\nfunction _randexp(value) {\n'],
  [
    '  const re = new import_randexp.default(value);\n',
    '  const key = `${import_randexp.default.prototype.max}\\u0000${value instanceof RegExp ? `/${value.source}/${value.flags}` : value}`;\n  let re = RANDEXPS.get(key);\n  if (re === void 0) RANDEXPS.set(key, re = new import_randexp.default(value));\n',
  ],
];

/** The patched module text, or null when the text is not the one the patch was written for. */
export function withRandExpCache(source: string): string | null {
  if (source.includes('_expandOnce(')) return null; // patched already
  let out = source;
  for (const [from, to] of EDITS) {
    const at = out.indexOf(from);
    if (at < 0 || out.indexOf(from, at + 1) >= 0) return null;
    out = out.slice(0, at) + to + out.slice(at + from.length);
  }
  return out;
}

/** The json-schema-faker file Prism's generator requires (its CommonJS build). */
export function jsfMainFile(): string {
  const fromPrism = createRequire(createRequire(import.meta.url).resolve('@stoplight/prism-http'));
  return fromPrism.resolve('json-schema-faker');
}

/** What CommonJS loading uses of a Module: not in @types/node, stable since Node's first releases. */
interface CompilableModule {
  filename: string;
  paths: string[];
  loaded: boolean;
  _compile(source: string, filename: string): void;
}
const ModuleInternals = Module as unknown as { new (id: string): CompilableModule; _nodeModulePaths(dir: string): string[] };

let patchedIn = false;
/** Whether this process loaded json-schema-faker with the pattern cache. */
export const randExpCacheLoaded = (): boolean => patchedIn;

/**
 * Loads json-schema-faker, patched, into the require cache, unless it is loaded already or its
 * text is not the expected one (Prism then loads it as it is).
 */
export function preloadJsfWithCache(): void {
  const file = jsfMainFile();
  const cache = createRequire(file).cache;
  if (cache[file] !== undefined) return; // loaded already (by this function, or too late)
  const patched = withRandExpCache(readFileSync(file, 'utf8'));
  if (patched === null) return;
  const m = new ModuleInternals(file);
  m.filename = file;
  m.paths = ModuleInternals._nodeModulePaths(path.dirname(file));
  cache[file] = m as unknown as NodeJS.Module;
  try {
    m._compile(patched, file);
  } catch (err) {
    delete cache[file];
    throw err;
  }
  m.loaded = true;
  patchedIn = true;
}
