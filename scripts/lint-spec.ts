// npm run lint:spec: redocly lint (recommended ruleset, redocly.yaml) on every OpenAPI document
// and the AsyncAPI parser's validation of the webhooks document. Any error or warning fails.
import path from 'node:path';
import { ASYNCAPI_DOC, OPENAPI_DOCS, ROOT, bin } from './lib/specs.ts';
import { run } from './lib/run.ts';
import { validateAsyncApi } from './lib/asyncapi.ts';

interface RedoclyProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: Array<{ source: { ref: string }; pointer?: string; start?: { line: number; col: number } }>;
}
interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: RedoclyProblem[];
}

let failures = 0;

for (const doc of OPENAPI_DOCS) {
  const result = await run(bin('redocly'), ['lint', doc.name, '--format=json', '--max-problems=1000']);
  const start = result.stdout.indexOf('{');
  if (start < 0) {
    console.error(`✖ ${doc.name}: redocly produced no report\n${result.stderr}`);
    failures += 1;
    continue;
  }
  const report = JSON.parse(result.stdout.slice(start)) as RedoclyReport;
  const count = report.totals.errors + report.totals.warnings;
  failures += count;
  console.log(`${count === 0 ? '✔' : '✖'} ${path.relative(ROOT, doc.file)}: ${report.totals.errors} errors, ${report.totals.warnings} warnings`);
  for (const p of report.problems) {
    const loc = p.location[0];
    const where = loc ? `${loc.source.ref}:${loc.start?.line ?? '?'}:${loc.start?.col ?? '?'} ${loc.pointer ?? ''}` : '';
    console.log(`    ${p.severity} ${p.ruleId}: ${p.message} (${where})`);
  }
}

const asyncResult = await validateAsyncApi(ASYNCAPI_DOC);
const asyncCount = asyncResult.errors.length + asyncResult.warnings.length;
failures += asyncCount;
console.log(
  `${asyncCount === 0 ? '✔' : '✖'} ${path.relative(ROOT, ASYNCAPI_DOC)}: ${asyncResult.errors.length} errors, ${asyncResult.warnings.length} warnings (@asyncapi/parser)`,
);
for (const e of asyncResult.errors) console.log(`    error ${e}`);
for (const w of asyncResult.warnings) console.log(`    warn ${w}`);

if (failures > 0) {
  console.error(`\nlint:spec failed: ${failures} problem(s).`);
  process.exit(1);
}
console.log('\nlint:spec: every document is clean.');
