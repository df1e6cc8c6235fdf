// Every mutant runs in exactly one of the mutants-<target>-<n>.test.ts files, against the checks
// its assertions need.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SERVER_MUTANTS } from './servers/index.ts';
import { createApiTarget } from '../../conformance/api/target.ts';
import { onlyChecks } from '../testing/run.ts';
import { apiChecksOf, mutantsOfShare, SHARES } from './run-mutants.ts';

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

describe('the checks a mutant runs against', () => {
  it('every check of the target when the mutant asserts that no other fails; else only the checks that must fail', () => {
    const mustFail = ['api.rules.isolation.order'];
    expect(apiChecksOf({ target: 'api', mustFail, failsOnly: /^api\.rules\.isolation\.order$/ })).toBeUndefined();
    expect(apiChecksOf({ target: 'sender', mustFail })).toBeUndefined();
    expect(apiChecksOf({ target: 'api', mustFail })).toEqual(mustFail);
  });

  it('refuses to prepare a run without every named check, so a misspelt id cannot make a run of nothing', async () => {
    const target = onlyChecks(createApiTarget(), ['api.rules.no-such-check']);
    await expect(target.prepare({ 'base-url': 'http://127.0.0.1:1', 'api-key': 'k', 'api-hash': 'h', 'tenant-id': 't' }, { seed: 1, quiet: true })).rejects.toThrow(/no check api\.rules\.no-such-check/);
  });
});
