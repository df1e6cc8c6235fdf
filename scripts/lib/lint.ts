// Linting one document: redocly lint (recommended ruleset, redocly.yaml) for an OpenAPI
// document, the AsyncAPI parser's validation for the webhooks document. Shared by
// `npm run lint:spec` (every document) and `npm run dev` (the document that changed).
import path from 'node:path';
import { getLineColLocation, lint as redoclyLint } from '@redocly/openapi-core';
import { redoclyConfig } from './redocly.ts';
import { bin, ROOT } from './specs.ts';
import { run } from './run.ts';
import { validateAsyncApi } from './asyncapi.ts';

export interface LintProblem {
  severity: 'error' | 'warn';
  rule: string;
  message: string;
  /** `file:line:col pointer` when the linter knows it, relative to the repository. */
  where: string;
}

interface RedoclyProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: Array<{ source: { ref: string }; pointer?: string; start?: { line: number; col: number } }>;
}

/** redocly lint of the API named in redocly.yaml; throws when redocly produced no report. */
export async function lintOpenApi(name: string): Promise<LintProblem[]> {
  const result = await run(bin('redocly'), ['lint', name, '--format=json', '--max-problems=1000']);
  const start = result.stdout.indexOf('{');
  if (start < 0) throw new Error(`redocly produced no report for ${name}\n${result.stderr.trim()}`);
  const report = JSON.parse(result.stdout.slice(start)) as { problems: RedoclyProblem[] };
  return report.problems.map((p) => {
    const loc = p.location[0];
    const where = loc ? `${loc.source.ref}:${loc.start?.line ?? '?'}:${loc.start?.col ?? '?'} ${loc.pointer ?? ''}`.trim() : '';
    return { severity: p.severity, rule: p.ruleId, message: p.message, where };
  });
}

/**
 * The same lint in this process (@redocly/openapi-core 1.x, the CLI is 2.x): what `npm run dev`
 * checks on every save without a process start. The two agree on these documents today;
 * `npm run lint:spec` (the CLI) stays the judge in CI.
 */
export async function lintOpenApiFile(file: string): Promise<LintProblem[]> {
  const problems = await redoclyLint({ ref: file, config: await redoclyConfig() });
  return problems.map((p) => {
    const loc = p.location[0];
    const at = loc ? getLineColLocation(loc) : undefined;
    const where = loc && at ? `${path.relative(ROOT, loc.source.absoluteRef)}:${at.start.line}:${at.start.col} ${loc.pointer ?? ''}`.trim() : '';
    return { severity: p.severity === 'error' ? 'error' : 'warn', rule: p.ruleId, message: p.message, where };
  });
}

/** The AsyncAPI parser's errors and warnings of a document (pointers, the parser gives no lines). */
export async function lintAsyncApi(file: string): Promise<LintProblem[]> {
  const { errors, warnings } = await validateAsyncApi(file);
  const where = path.relative(ROOT, file);
  return [
    ...errors.map((e) => ({ severity: 'error' as const, rule: '@asyncapi/parser', message: e, where })),
    ...warnings.map((w) => ({ severity: 'warn' as const, rule: '@asyncapi/parser', message: w, where })),
  ];
}

export const formatProblem = (p: LintProblem): string => `${p.severity} ${p.rule}: ${p.message}${p.where === '' ? '' : ` (${p.where})`}`;
