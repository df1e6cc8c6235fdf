// The Arazzo workflows of spec/workflows/: the API flows as a partner reads and runs them.
// Shared by lint:spec (redocly lint, then every step's operation checked against the
// project's own OpenAPI documents), spec:diff (a changed workflow is a changed contract) and
// `npm run workflows` (redocly respect against a server).
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { bin, SPEC_DIR } from './specs.ts';
import { run } from './run.ts';
import type { LintProblem } from './lint.ts';

export const WORKFLOWS_DIR = path.join(SPEC_DIR, 'workflows');
const ARAZZO_FILE = /^(.+)\.arazzo\.ya?ml$/;

type Json = Record<string, unknown>;

/** The Arazzo files of a workflows folder, sorted; none when the folder does not exist. */
export function workflowFiles(dir: string = WORKFLOWS_DIR): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => ARAZZO_FILE.test(n)).sort().map((n) => path.join(dir, n));
}

/** `payout-lookup` for `…/payout-lookup.arazzo.yaml`: the name spec:diff reports it under. */
export const workflowDocName = (file: string): string => `workflows/${ARAZZO_FILE.exec(path.basename(file))?.[1] ?? path.basename(file)}`;

export async function loadArazzo(file: string): Promise<Json> {
  const doc = parseYaml(await readFile(file, 'utf8')) as unknown;
  if (doc === null || typeof doc !== 'object' || !('arazzo' in doc)) throw new Error(`${file} is not an Arazzo document (no "arazzo" field)`);
  return doc as Json;
}

/** The source descriptions every workflow names, by name (the `-S name=url` of respect). */
export async function sourceDescriptionNames(files: readonly string[]): Promise<string[]> {
  const names = new Set<string>();
  for (const file of files) {
    for (const s of ((await loadArazzo(file)).sourceDescriptions as Json[] | undefined) ?? []) if (typeof s.name === 'string') names.add(s.name);
  }
  return [...names].sort();
}

// ---- redocly lint ---------------------------------------------------------------------------

interface RedoclyReport {
  problems: Array<{ ruleId: string; severity: 'error' | 'warn'; message: string; location: Array<{ source: { ref: string }; pointer?: string; start?: { line: number; col: number } }> }>;
}

/** The JSON objects redocly prints one after another (one report per linted file). */
export function splitJsonObjects(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = depth > 0;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth += 1;
    } else if (c === '}' && depth > 0) {
      depth -= 1;
      if (depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return out;
}

/** redocly lint (its Arazzo rules) of every workflow file, in one process. */
export async function lintArazzoFiles(files: readonly string[]): Promise<LintProblem[]> {
  if (files.length === 0) return [];
  const result = await run(bin('redocly'), ['lint', ...files, '--format=json', '--max-problems=1000']);
  const reports = splitJsonObjects(result.stdout) as RedoclyReport[];
  if (reports.length !== files.length) throw new Error(`redocly lint gave ${reports.length} report(s) for ${files.length} workflow file(s)\n${result.stderr.trim()}`);
  return reports.flatMap((r) =>
    r.problems.map((p) => {
      const loc = p.location[0];
      const where = loc ? `${loc.source.ref}:${loc.start?.line ?? '?'}:${loc.start?.col ?? '?'} ${loc.pointer ?? ''}`.trim() : '';
      return { severity: p.severity, rule: p.ruleId, message: p.message, where };
    }),
  );
}

// ---- operations ---------------------------------------------------------------------------

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

async function operationIdsOf(openApiFile: string): Promise<Set<string>> {
  const doc = parseYaml(await readFile(openApiFile, 'utf8')) as { paths?: Record<string, Record<string, { operationId?: unknown }>> };
  const ids = new Set<string>();
  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const id = item[method]?.operationId;
      if (typeof id === 'string') ids.add(id);
    }
  }
  return ids;
}

/**
 * What redocly lint does not check: every step calls an operation, by `operationId`, that one
 * of the workflow's source descriptions (a local OpenAPI document of spec/) defines, so a
 * renamed or removed operation fails lint:spec. `operationPath` is refused: a path breaks
 * silently when the document is reorganised.
 */
export async function checkWorkflowOperations(file: string): Promise<LintProblem[]> {
  const problems: LintProblem[] = [];
  const rel = path.relative(path.dirname(SPEC_DIR), file);
  const problem = (pointer: string, message: string): void => void problems.push({ severity: 'error', rule: 'workflow-operation', message, where: `${rel} ${pointer}` });
  const doc = await loadArazzo(file);
  const sources = new Map<string, Set<string>>();
  for (const [i, s] of (((doc.sourceDescriptions as Json[] | undefined) ?? []).entries())) {
    const { name, url, type } = s as { name?: unknown; url?: unknown; type?: unknown };
    if (typeof name !== 'string' || typeof url !== 'string') continue; // redocly lint reports it
    if (type !== 'openapi' || /^[a-z][a-z0-9+.-]*:/i.test(url)) {
      problem(`#/sourceDescriptions/${i}`, `source description "${name}" must be a local OpenAPI document of spec/ (a relative url), not ${String(type)} ${url}`);
      continue;
    }
    try {
      sources.set(name, await operationIdsOf(path.resolve(path.dirname(file), url)));
    } catch (err) {
      problem(`#/sourceDescriptions/${i}`, `source description "${name}": cannot read ${url}: ${(err as Error).message}`);
    }
  }
  const workflowIds = new Set(((doc.workflows as Json[] | undefined) ?? []).map((w) => w.workflowId));
  for (const [w, workflow] of (((doc.workflows as Json[] | undefined) ?? []).entries())) {
    for (const [s, step] of (((workflow.steps as Json[] | undefined) ?? []).entries())) {
      const at = `#/workflows/${w}/steps/${s}`;
      if (step.operationPath !== undefined) problem(at, `step "${String(step.stepId)}" names its operation by operationPath; use its operationId`);
      if (typeof step.workflowId === 'string' && !workflowIds.has(step.workflowId)) problem(at, `step "${String(step.stepId)}" calls workflow ${step.workflowId}, which this document does not define`);
      if (typeof step.operationId !== 'string') continue;
      const qualified = /^\$sourceDescriptions\.([^.]+)\.(.+)$/.exec(step.operationId);
      if (qualified) {
        const [, source = '', id = ''] = qualified;
        const ids = sources.get(source);
        if (ids === undefined) problem(at, `step "${String(step.stepId)}": no source description "${source}"`);
        else if (!ids.has(id)) problem(at, `step "${String(step.stepId)}": operation ${id} is not in source description "${source}"`);
        continue;
      }
      const holders = [...sources].filter(([, ids]) => ids.has(step.operationId as string)).map(([name]) => name);
      if (holders.length === 0) problem(at, `step "${String(step.stepId)}": operation ${step.operationId} is in none of the source descriptions (${[...sources.keys()].join(', ')})`);
      else if (holders.length > 1) problem(at, `step "${String(step.stepId)}": operation ${step.operationId} is in ${holders.join(' and ')}; write $sourceDescriptions.<name>.${step.operationId}`);
    }
  }
  return problems;
}
