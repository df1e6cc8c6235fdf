// lint:spec's own check of spec/workflows/: every step calls, by operationId, an operation of
// the project's OpenAPI documents, so renaming or removing an operation fails the lint.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkWorkflowOperations, splitJsonObjects, workflowDocName, workflowFiles } from './workflows.ts';
import { SPEC_DIR } from './specs.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'workflows-lint-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const spec = (file: string): string => path.join(SPEC_DIR, file);

async function workflow(steps: string, sources = `  - { name: transactions, url: ${spec('transactions.openapi.yaml')}, type: openapi }\n  - { name: orders, url: ${spec('orders.openapi.yaml')}, type: openapi }\n`): Promise<string> {
  const file = path.join(dir, 'w.arazzo.yaml');
  await writeFile(file, `arazzo: 1.0.1\ninfo: { title: t, version: 1.0.0 }\nsourceDescriptions:\n${sources}workflows:\n  - workflowId: w\n    steps:\n${steps}`);
  return file;
}

describe('checkWorkflowOperations', () => {
  it('passes every workflow of spec/workflows/', async () => {
    const files = workflowFiles();
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const file of files) expect(await checkWorkflowOperations(file), file).toEqual([]);
  });

  it('names a step whose operationId no source description defines, or the wrong one', async () => {
    const file = await workflow(
      [
        '      - { stepId: ok, operationId: createPayout }',
        '      - { stepId: renamed, operationId: createPayoutV2 }',
        '      - { stepId: qualified, operationId: $sourceDescriptions.orders.getOrder }',
        '      - { stepId: wrongSource, operationId: $sourceDescriptions.orders.createPayout }',
        '      - { stepId: noSource, operationId: $sourceDescriptions.sandbox.cancelSandboxOrder }',
        "      - { stepId: byPath, operationPath: '{$sourceDescriptions.orders.url}#/paths/~1v2~1orders/post' }",
        '',
      ].join('\n'),
    );
    const messages = (await checkWorkflowOperations(file)).map((p) => `${p.where.split(' ').pop() ?? ''} ${p.message}`);
    expect(messages).toEqual([
      '#/workflows/0/steps/1 step "renamed": operation createPayoutV2 is in none of the source descriptions (transactions, orders)',
      '#/workflows/0/steps/3 step "wrongSource": operation createPayout is not in source description "orders"',
      '#/workflows/0/steps/4 step "noSource": no source description "sandbox"',
      '#/workflows/0/steps/5 step "byPath" names its operation by operationPath; use its operationId',
    ]);
  });

  it('refuses a source description that is not a local OpenAPI document', async () => {
    const file = await workflow('      - { stepId: s, operationId: createPayout }\n', '  - { name: remote, url: https://api.example.invalid/openapi.yaml, type: openapi }\n');
    const problems = await checkWorkflowOperations(file);
    expect(problems.map((p) => p.message)).toEqual([
      'source description "remote" must be a local OpenAPI document of spec/ (a relative url), not openapi https://api.example.invalid/openapi.yaml',
      'step "s": operation createPayout is in none of the source descriptions ()',
    ]);
  });
});

describe('helpers', () => {
  it('splits the JSON reports redocly prints one after another', () => {
    expect(splitJsonObjects('{"a":{"b":"}{"}}{"c":[1]}\n{"d":"\\"{"}')).toEqual([{ a: { b: '}{' } }, { c: [1] }, { d: '"{' }]);
  });
  it('names a workflow document as spec:diff reports it', () => {
    expect(workflowDocName('/x/spec/workflows/payout-lookup.arazzo.yaml')).toBe('workflows/payout-lookup');
  });
});
