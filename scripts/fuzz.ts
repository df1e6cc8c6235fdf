// npm run fuzz [-- --runs N --seed S]: the fuzzing of server/fuzz/fuzz.ts at length (default
// 200 runs per operation, a random seed printed so that a finding can be repeated).
import { parseArgs } from 'node:util';
import { fuzzEveryOperation } from '../server/fuzz/fuzz.ts';
import { checkSettings, positiveIntSetting } from './lib/settings.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '200' }, seed: { type: 'string' } } });
const runs = checkSettings('fuzz', () => positiveIntSetting('--runs', values.runs));
const seed = values.seed !== undefined ? checkSettings('fuzz', () => positiveIntSetting('--seed', values.seed)) : Math.floor(Math.random() * 2 ** 31);
process.stdout.write(`fuzz: seed ${seed}, ${runs} runs per operation\n`);
const result = await fuzzEveryOperation({ seed, runs, log: (line) => process.stdout.write(`${line}\n`) });
process.stdout.write(`fuzz: ${result.requests} requests, by status ${JSON.stringify(result.byStatus)}, ${result.findings.length} findings\n`);
for (const f of result.findings) process.stdout.write(`${JSON.stringify(f)}\n`);
process.exitCode = result.findings.length === 0 ? 0 : 1;
