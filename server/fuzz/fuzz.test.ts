// npm test's share of the fuzzing: a fixed seed and a few runs per operation (npm run fuzz runs
// many more). Any finding fails with what was sent and what came back.
import { describe, expect, it } from 'vitest';
import { fuzzEveryOperation } from './fuzz.ts';

const SEED = 20261123;
const RUNS = Number(process.env.FUZZ_RUNS ?? 8);

describe('fuzzing every operation', () => {
  it(`answers no 5xx, only valid problem+json, and never changes the store on a refusal (seed ${SEED}, ${RUNS} runs per operation)`, async () => {
    const result = await fuzzEveryOperation({ seed: SEED, runs: RUNS });
    process.stdout.write(`fuzz: ${result.requests} requests, by status ${JSON.stringify(result.byStatus)}\n`);
    expect(result.findings).toEqual([]);
    expect(result.requests).toBeGreaterThan(0);
  }, 300_000);
});
