// vitest globalSetup: bundles the programs tests start as children (server-bundle.ts) once for
// the run, into a folder of its own under node_modules/.cache (so that two runs side by side
// never share one), removed when the run ends. Workers learn the folder through `provide`
// (server-bundle-setup.ts), children through the environment they inherit.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { buildChildBundles } from './server-bundle.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    childBundles: string;
  }
}

const CACHE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.cache', 'test-bundles');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await mkdir(CACHE, { recursive: true });
  const run = await mkdtemp(path.join(CACHE, 'run-'));
  // A folder inside the run's: the build's own folders are written beside it (build/swap.ts).
  const dir = path.join(run, 'bundles');
  const started = Date.now();
  await buildChildBundles(dir);
  process.stdout.write(`child programs bundled in ${Date.now() - started} ms\n`);
  project.provide('childBundles', dir);
  return () => rm(run, { recursive: true, force: true });
}
