// npm run test:slow [-- DIR]: the 15 slowest test files of the runs whose JSON reports are in
// DIR (default test-results/, where .ci/run writes one per Node major).
import { existsSync } from 'node:fs';
import { formatSlowest, readReports } from './test-time/slowest.ts';

const dir = process.argv[2] ?? 'test-results';
if (!existsSync(dir)) {
  process.stderr.write(`test:slow: no folder ${dir}; run the suite with --reporter=json --outputFile.json=${dir}/vitest-NAME.json first (.ci/run does)\n`);
  process.exit(2);
}
const files = readReports(dir);
if (files.length === 0) {
  process.stderr.write(`test:slow: no vitest-*.json report in ${dir}\n`);
  process.exit(2);
}
process.stdout.write(`${formatSlowest(files)}\n`);
