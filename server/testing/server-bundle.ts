// The programs the tests start as child processes many times (the server, the CLI, spec:diff),
// bundled once per `vitest run` by esbuild instead of transpiled by tsx in every child: a child then starts on plain JavaScript (the server is ready in about half the
// CPU time). Built by server-bundle-global-setup.ts; childEntry() falls back to tsx outside a
// run (benchmarks, scripts) or for a program not bundled.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { bundleName, SENDER_THREAD_PROGRAM } from '../delivery/thread/program.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The programs bundled, relative to the repository root. */
export const CHILD_PROGRAMS = ['server/main.ts', SENDER_THREAD_PROGRAM, 'client/cli/bin.ts', 'scripts/spec-diff.ts'] as const;

/** Where a run's bundles are: handed to workers and children by the global setup. */
export const BUNDLE_DIR_VARIABLE = 'TEST_CHILD_BUNDLES';

/**
 * Keeps each module's own import.meta.url: the code finds its files (migrations, generated/,
 * the portal's assets) relative to its source file, which a bundle would otherwise move.
 */
const keepModuleUrls: Plugin = {
  name: 'keep-module-urls',
  setup(build) {
    build.onLoad({ filter: /\.tsx?$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
      loader: args.path.endsWith('.tsx') ? 'tsx' : 'ts',
    }));
  },
};

/**
 * Bundles CHILD_PROGRAMS into outDir (inside the repository, so that packages resolve from its
 * node_modules). `root` and `programs` bundle another tree the same way: the previous release,
 * checked out from git, for the rolling-upgrade test (faults/previous-release.ts).
 */
export async function buildChildBundles(outDir: string, { root = ROOT, programs = CHILD_PROGRAMS }: { root?: string; programs?: readonly string[] } = {}): Promise<void> {
  const { build } = await import('esbuild');
  await build({
    entryPoints: Object.fromEntries(programs.map((p) => [bundleName(p), path.join(root, p)])),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    packages: 'external',
    sourcemap: 'linked',
    jsx: 'automatic',
    jsxImportSource: 'hono/jsx',
    plugins: [keepModuleUrls],
    logLevel: 'warning',
  });
}

export { bundleName };

/** The node arguments that run `program` (relative to the root): its bundle when this run built one, else tsx. */
export function childEntry(program: string): string[] {
  const dir = process.env[BUNDLE_DIR_VARIABLE];
  if (dir && (CHILD_PROGRAMS as readonly string[]).includes(program)) return ['--enable-source-maps', path.join(dir, `${bundleName(program)}.mjs`)];
  return ['--import', 'tsx', path.join(ROOT, program)];
}
