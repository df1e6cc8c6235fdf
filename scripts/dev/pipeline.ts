// What a save does. The YAML parse first (milliseconds), then the lint, the in-memory
// regeneration and the docs pages (into a staging folder) side by side. Only when every check
// passed are generated/ written, the pages published, the saved files given to the mock (it
// serves the last good copy of spec/) and the server replaced if its behaviour changed;
// otherwise the errors are printed and the last good server, mock and docs keep serving.
// spec:diff and the type-check report after the change is served.
import path from 'node:path';
import { generateTargets, type GenerationTarget } from '../generate.ts';
import { ROOT, type OpenApiDoc } from '../lib/specs.ts';
import { affectedBy } from './affected.ts';
import { reloadMock, startMockProcess, type MockLayout, type RunningMock } from './mock.ts';
import { promote } from './last-good.ts';
import { freePort, startServer, type Managed } from './processes.ts';
import type { ReloadHub } from './reload.ts';
import { emit, failed, info, ok, skipped } from './reporter.ts';
import { stagePages } from './steps/docs.ts';
import { writeGenerated, type Regenerated } from './steps/generate.ts';
import { lintProblems } from './steps/lint.ts';
import { diffAgainst, type Release } from './steps/spec-diff.ts';
import { yamlErrors } from './steps/syntax.ts';

export interface RunningServer extends Managed {
  port: number;
}

export interface LoopState {
  server: RunningServer;
  mock: RunningMock;
  layout: MockLayout;
  reload: ReloadHub;
  docsDir: string;
  /** The last copy of spec/ that passed the checks, which the mock serves. */
  lastGood: string;
  serverEnv: NodeJS.ProcessEnv;
  release: Promise<Release | undefined>;
  output: (who: string) => (line: string) => void;
}

export async function launchServer(state: Pick<LoopState, 'serverEnv' | 'output'>): Promise<RunningServer> {
  const port = await freePort();
  return { ...(await startServer(port, state.serverEnv, state.output('server'))), port };
}

/** Settles a promise into its value or its error, so parallel steps can all be waited for. */
async function settle<T>(p: Promise<T> | null): Promise<{ value?: T; error?: string }> {
  if (p === null) return {};
  try {
    return { value: await p };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

function refuse(files: string[], errors: string[]): void {
  failed(`not served: ${files.map((f) => path.relative(ROOT, f)).join(', ')}; the last good server, mock and docs keep serving`, errors);
  emit({ type: 'change-refused', files, errors });
}

/** Switches to the replacement; the old process stops in the background (it drains its requests). */
function replace<T extends Managed>(current: T, next: T, set: (m: T) => void): void {
  set(next);
  void current.stop();
}

/** The mock serves the last good copy: promote the saved files; it reloads them, or a new one starts. */
async function followMock(state: LoopState, files: readonly string[], targets: readonly GenerationTarget[]): Promise<string> {
  // The mock serves generated/, written above only for a save that passed.
  await promote(files, state.lastGood);
  if (await reloadMock(state.mock)) return 'mock reloaded the documents';
  replace(state.mock, await startMockProcess(state.layout, state.lastGood, state.output('mock')), (m) => (state.mock = m));
  return 'mock restarted';
}

export async function onSave(state: LoopState, files: string[]): Promise<void> {
  const started = performance.now();
  const names = files.map((f) => path.relative(ROOT, f)).join(', ');
  info(`saved ${names}`);
  const syntax = await yamlErrors(files);
  if (syntax.length > 0) return refuse(files, ['YAML syntax:', ...syntax]);

  const { targets } = await affectedBy(files);
  if (targets.length === 0) return skipped(names, 'belongs to no document; nothing to rebuild');
  // Every document has a page, the webhooks (AsyncAPI) one included.
  const pages = targets.filter((t) => t !== 'problem-types');
  const mockNeeded = targets.some((t) => (state.layout.served as readonly GenerationTarget[]).includes(t));

  const pagesP = pages.length > 0 ? stagePages(pages, state.docsDir) : null;
  const [lint, generated] = await Promise.all([settle(lintProblems(targets)), settle(generateTargets(targets))]);
  const problems = [...(lint.error !== undefined ? [`lint: ${lint.error}`] : (lint.value ?? [])), ...(generated.error !== undefined ? [`generate: ${generated.error}`] : [])];
  if (problems.length > 0 || generated.value === undefined) {
    refuse(files, problems);
    await settle(pagesP).then((p) => p.value?.discard());
    return;
  }
  ok(`lint ${targets.join(', ')}`, performance.now() - started, '0 problems');
  const regenerated = await writeGenerated(generated.value);
  ok('generate', performance.now() - started, regenerated.written.length === 0 ? 'generated/ unchanged' : `wrote ${regenerated.written.map((f) => `generated/${f}`).join(', ')}`);

  // Each part switches in as soon as it is ready: the docs need not wait for Prism.
  const parts = await Promise.all([
    settle(regenerated.restartServer ? launchServer(state).then((next) => replace(state.server, next, (s) => (state.server = s))).then(() => 'server restarted') : null),
    settle(mockNeeded ? followMock(state, files, targets) : null),
    settle(pagesP?.then((staged) => staged.publish()).then((published) => {
      state.reload.notify(published);
      return `docs ${published.join(', ')} rebuilt`;
    }) ?? null),
  ]);
  const errors = parts.flatMap((p) => (p.error === undefined ? [] : [p.error]));
  if (errors.length > 0) failed('a part did not switch to the change; it serves the last good version', errors);
  const done = parts.flatMap((p) => (p.value === undefined ? [] : [p.value]));
  if (!regenerated.restartServer) done.push('server not restarted: no behaviour changed (generated/ differs in annotations only, served from disk)');
  const ms = performance.now() - started;
  ok(`serving ${names}`, ms, `(${done.join('; ')})`);
  emit({ type: 'change-served', files, ms });

  await reportDiff(state, regenerated.resolved);
  emit({ type: 'change-done', files });
}

async function reportDiff(state: LoopState, resolved: Regenerated['resolved']): Promise<void> {
  const release = await state.release;
  if (release === undefined) return skipped('spec:diff', 'no earlier version of spec/ to compare with');
  const diff = await settle(diffAgainst(release, resolved));
  if (diff.error !== undefined) failed('spec:diff', [diff.error]);
  else info(`spec:diff ${diff.value?.join('\n    ') ?? ''}`);
}

/** Runs saves one after another; saves that arrive meanwhile are merged into the next run. */
export function serialize(run: (files: string[]) => Promise<void>): (files: string[]) => void {
  let running: Promise<void> | null = null;
  let queued = new Set<string>();
  const next = (): void => {
    if (running !== null || queued.size === 0) return;
    const files = [...queued].sort();
    queued = new Set();
    running = run(files)
      .catch((err: unknown) => failed('the loop', [err instanceof Error ? (err.stack ?? err.message) : String(err)]))
      .finally(() => {
        running = null;
        next();
      });
  };
  return (files) => {
    for (const f of files) queued.add(f);
    next();
  };
}
