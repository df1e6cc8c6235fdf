// Running the Arazzo workflows of spec/workflows/ with `redocly respect` against one base URL:
// every source description (transactions, orders, management, sandbox) is pointed at it, the
// credentials and a fresh runId are the workflows' inputs. Used by `npm run workflows`, CI and
// the test that shows a broken server fails them.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { bin, TOOL_ENV } from '../lib/specs.ts';
import { loadArazzo, sourceDescriptionNames, workflowFiles } from '../lib/workflows.ts';

export interface RespectOptions {
  baseUrl: string;
  apiKey: string;
  apiHash: string;
  /** Workflow files; default every file of spec/workflows/. */
  files?: readonly string[];
  /** workflowIds to run (respect --workflow); default all. */
  workflows?: readonly string[];
  /** New at every run (thirdPartyIds, Idempotency-Keys); default a random one. */
  runId?: string;
  /** respect --json-output. */
  jsonOutput?: string;
  /** Where respect's report goes; default this process's stdout and stderr. */
  output?: (chunk: string) => void;
}

export interface RespectResult {
  code: number;
  runId: string;
  output: string;
}

export const newRunId = (): string => `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;

/** The respect command line for these options (the credentials are inputs, given as JSON). */
export async function respectArgs(opts: RespectOptions, runId: string): Promise<string[]> {
  const files = await selectFiles(opts.files ?? workflowFiles(), opts.workflows);
  if (files.length === 0) throw new Error('no workflow file to run (spec/workflows/*.arazzo.yaml)');
  const base = opts.baseUrl.replace(/\/+$/, '');
  const servers = (await sourceDescriptionNames(files)).flatMap((name) => ['--server', `${name}=${base}`]);
  // One JSON object: respect splits a name=value input at every "," and "=".
  const inputs = JSON.stringify({ apiKey: opts.apiKey, apiHash: opts.apiHash, runId });
  return [
    'respect',
    ...files,
    ...servers,
    '--input',
    inputs,
    // respect wants each --workflow in every file it runs: within one file only.
    ...(files.length === 1 ? (opts.workflows ?? []).flatMap((w) => ['--workflow', w]) : []),
    ...(opts.jsonOutput === undefined ? [] : ['--json-output', path.resolve(opts.jsonOutput)]),
  ];
}

/** The files that define the wanted workflowIds (all files when none is named). */
async function selectFiles(files: readonly string[], wanted: readonly string[] | undefined): Promise<string[]> {
  if (wanted === undefined || wanted.length === 0) return [...files];
  const ids = new Map<string, string[]>();
  for (const file of files) ids.set(file, (((await loadArazzo(file)).workflows as Array<{ workflowId?: unknown }> | undefined) ?? []).map((w) => String(w.workflowId)));
  const unknown = wanted.filter((w) => ![...ids.values()].some((list) => list.includes(w)));
  if (unknown.length > 0) throw new Error(`no workflow ${unknown.join(', ')} in spec/workflows/ (there are: ${[...ids.values()].flat().join(', ')})`);
  return files.filter((f) => ids.get(f)?.some((id) => wanted.includes(id)));
}

/** Runs respect; resolves with its exit status and what it printed. */
export async function runWorkflows(opts: RespectOptions): Promise<RespectResult> {
  const runId = opts.runId ?? newRunId();
  const args = await respectArgs(opts, runId);
  const write = opts.output ?? ((chunk: string) => void process.stdout.write(chunk));
  return new Promise((resolve, reject) => {
    // Colours only on a terminal: CI logs and the tests read plain text.
    const env = process.stdout.isTTY ? TOOL_ENV : { ...TOOL_ENV, NO_COLOR: '1' };
    // Run outside the repository: redocly.yaml configures the linting of the documents, and
    // respect would only print its warnings about rules that do not apply to a workflow.
    const child = spawn(bin('redocly'), args, { cwd: os.tmpdir(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (chunk: Buffer): void => {
      const text = chunk.toString();
      output += text;
      write(text);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, runId, output }));
  });
}
