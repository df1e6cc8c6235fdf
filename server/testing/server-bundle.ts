// The programs the tests start as child processes many times (the server, the admin tool, the
// CLI, spec:diff), bundled once per `vitest run` by esbuild instead of transpiled by tsx in
// every child: a child then starts on plain JavaScript (the server is ready in about half the
// CPU time). The build is `npm run build`'s (server/build/bundle.ts), into a folder of the run's
// own (server-bundle-global-setup.ts); childEntry() falls back to tsx outside a run
// (benchmarks, scripts) or for a program not bundled.
import path from 'node:path';
import { ROOT, SERVED_PROGRAMS, buildBundles, bundleFile, bundleName } from '../build/bundle.ts';
import { serverNodeArgs } from '../build/layout.ts';

/** The programs bundled, relative to the repository root: what `npm start` runs, and more. */
export const CHILD_PROGRAMS = [...SERVED_PROGRAMS, 'client/cli/bin.ts', 'scripts/spec-diff.ts'] as const;

/** Where a run's bundles are: handed to workers and children by the global setup. */
export const BUNDLE_DIR_VARIABLE = 'TEST_CHILD_BUNDLES';

/**
 * Bundles CHILD_PROGRAMS into outDir (inside the repository, so that packages resolve from its
 * node_modules). `root` and `programs` bundle another tree the same way: the previous release,
 * checked out from git, for the rolling-upgrade test (faults/previous-release.ts).
 */
export async function buildChildBundles(outDir: string, { root = ROOT, programs = CHILD_PROGRAMS }: { root?: string; programs?: readonly string[] } = {}): Promise<void> {
  await buildBundles(programs, outDir, root);
}

export { bundleName };

/** The node arguments that run `program` (relative to the root): its bundle when this run built one, else tsx. */
export function childEntry(program: string): string[] {
  const dir = process.env[BUNDLE_DIR_VARIABLE];
  if (dir && program === 'server/main.ts') return serverNodeArgs(dir);
  if (dir && (CHILD_PROGRAMS as readonly string[]).includes(program)) return ['--enable-source-maps', bundleFile(dir, program)];
  return ['--import', 'tsx', path.join(ROOT, program)];
}
