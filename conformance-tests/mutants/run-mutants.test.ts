// Every mutant runs in exactly one of the mutants-<target>-<n>.test.ts files.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SERVER_MUTANTS } from './servers/index.ts';
import { mutantsOfShare, SHARES } from './run-mutants.ts';

describe('the mutants’ shares', () => {
  it('has one test file per share of each target, and no other', () => {
    const files = readdirSync(path.dirname(fileURLToPath(import.meta.url))).filter((f) => /^mutants-(api|sender)-\d+\.test\.ts$/.test(f));
    const expected = Object.entries(SHARES).flatMap(([target, n]) => Array.from({ length: n }, (_, i) => `mutants-${target}-${i + 1}.test.ts`));
    expect(files.sort()).toEqual(expected.sort());
  });

  it('puts every mutant in exactly one share', () => {
    const shared = Object.entries(SHARES).flatMap(([target, n]) => Array.from({ length: n }, (_, i) => mutantsOfShare(target as 'api' | 'sender', i)).flat());
    expect(shared.map((m) => m.name).sort()).toEqual(SERVER_MUTANTS.map((m) => m.name).sort());
  });
});
