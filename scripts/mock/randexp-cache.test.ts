// The pattern cache of json-schema-faker (randexp-cache.ts): it applies to the installed
// version, Prism's generator runs with it, and what it generates still matches every pattern.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import './prism-hooks.ts';
import { jsfMainFile, randExpCacheLoaded, withRandExpCache } from './randexp-cache.ts';

const jsfMain = jsfMainFile();

describe("json-schema-faker's pattern cache", () => {
  it('applies to the installed json-schema-faker (an upgrade that changed its text fails here)', () => {
    expect(jsfMain).toMatch(/[\\/]json-schema-faker[\\/]dist[\\/]main\.cjs$/);
    const source = readFileSync(jsfMain, 'utf8');
    const patched = withRandExpCache(source);
    expect(patched).not.toBeNull();
    expect(patched).toContain('_expandOnce(token)');
    expect(withRandExpCache('module.exports = {};')).toBeNull();
  });

  it('is in the generator Prism loads, which still draws every string from its pattern and length bounds', async () => {
    // Required as Prism requires it: from Prism's folder.
    const { JSONSchemaFaker } = createRequire(createRequire(import.meta.url).resolve('@stoplight/prism-http'))('json-schema-faker') as typeof import('json-schema-faker');
    expect(randExpCacheLoaded()).toBe(true);
    expect(JSONSchemaFaker.generate).toBeTypeOf('function');
    const patterns = ['^[0-9a-f]{64}$', '^(0|[1-9][0-9]{0,29})(\\.[0-9]{1,8})?$', '^[A-Za-z0-9_-]+$', '^whsec_[A-Za-z0-9_-]{43,44}$', '^[!-~]+$'];
    for (const pattern of patterns) {
      const seen = new Set<string>();
      for (let i = 0; i < 200; i++) {
        const value = JSONSchemaFaker.generate({ type: 'string', pattern, maxLength: 80 }) as string;
        expect(value).toMatch(new RegExp(pattern));
        expect(value.length).toBeLessThanOrEqual(80);
        seen.add(value);
      }
      // Drawn anew each time, not one value kept with the pattern.
      expect(seen.size).toBeGreaterThan(100);
    }
  });
});
