// npm run lint:spec: redocly lint (recommended ruleset, redocly.yaml) on every OpenAPI document
// and every Arazzo workflow of spec/workflows/ (whose steps must call operations, by
// operationId, that the project's own documents define), and the AsyncAPI parser's validation
// of the webhooks document, and the contract's rules (x-rules: well-formed ids, each used once;
// scripts/lib/rules.ts). Any error or warning fails.
import path from 'node:path';
import { ASYNCAPI_DOC, OPENAPI_DOCS, ROOT } from './lib/specs.ts';
import { formatProblem, lintAsyncApi, lintOpenApi, type LintProblem } from './lib/lint.ts';
import { checkWorkflowOperations, lintArazzoFiles, workflowFiles } from './lib/workflows.ts';
import { bundleOpenApi } from './lib/redocly.ts';
import { loadAsyncApi } from './lib/asyncapi.ts';
import { contractRules } from './lib/rules.ts';

let failures = 0;

function report(file: string, problems: LintProblem[], suffix = ''): void {
  const errors = problems.filter((p) => p.severity === 'error').length;
  failures += problems.length;
  console.log(`${problems.length === 0 ? '✔' : '✖'} ${path.relative(ROOT, file)}: ${errors} errors, ${problems.length - errors} warnings${suffix}`);
  for (const p of problems) console.log(`    ${formatProblem(p)}`);
}

for (const doc of OPENAPI_DOCS) {
  try {
    report(doc.file, await lintOpenApi(doc.name));
  } catch (err) {
    console.error(`✖ ${doc.name}: ${(err as Error).message}`);
    failures += 1;
  }
}
report(ASYNCAPI_DOC, await lintAsyncApi(ASYNCAPI_DOC), ' (@asyncapi/parser)');

const workflows = workflowFiles();
try {
  const redocly = await lintArazzoFiles(workflows);
  for (const file of workflows) {
    const own = redocly.filter((p) => p.where.startsWith(`${path.relative(ROOT, file)}:`) || p.where.startsWith(`${file}:`));
    report(file, [...own, ...(await checkWorkflowOperations(file))], ' (Arazzo)');
  }
} catch (err) {
  console.error(`✖ spec/workflows: ${(err as Error).message}`);
  failures += 1;
}

try {
  const resolved = new Map(await Promise.all(OPENAPI_DOCS.map(async (d) => [d.name, await bundleOpenApi(d.file, true, path.relative(ROOT, d.file))] as const)));
  const { rules, problems } = contractRules(resolved, (await loadAsyncApi(ASYNCAPI_DOC)) as Record<string, unknown>, {});
  failures += problems.length;
  console.log(`${problems.length === 0 ? '✔' : '✖'} x-rules: ${rules.filter((r) => r.kind === 'written').length} written rules, ${rules.length} in all, ${problems.length} problems`);
  for (const p of problems) console.log(`    ${p}`);
} catch (err) {
  console.error(`✖ x-rules: ${(err as Error).message}`);
  failures += 1;
}

if (failures > 0) {
  console.error(`\nlint:spec failed: ${failures} problem(s).`);
  process.exit(1);
}
console.log('\nlint:spec: every document is clean.');
