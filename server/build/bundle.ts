// The server's programs as plain JavaScript, built one way for everyone: `npm run build` writes
// dist/, which `npm start` and `npm run admin` run, and the tests' global setup writes a folder
// per run (server/testing/server-bundle.ts), so the program deployed is the program tested and
// neither pays a transpiler at start-up.
//
// Each build records what it read (build.json): `--if-stale` (npm start) rebuilds only when a
// source is newer than the build, the bundle is missing, or the checkout moved (the bundles
// name their source files by absolute path, see keepModuleUrls).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';
import { SENDER_THREAD_PROGRAM } from '../delivery/thread/program.ts';
import { bundleFile, bundleName } from './layout.ts';

export { bundleFile, bundleName };

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What `npm run build` writes and `npm start` runs. */
export const DIST_DIR = path.join(ROOT, 'dist');

/** The programs `npm run build` bundles into DIST_DIR, relative to the root (the server's sending thread among them). */
export const SERVED_PROGRAMS = ['server/main.ts', SENDER_THREAD_PROGRAM, 'server/admin/cli.ts'] as const;

/** The record of a build, beside its bundles. */
const BUILD_INFO = 'build.json';

/**
 * A source saved this long before a build started counts as newer than it: file systems keep
 * coarse times (a second on some, a clock tick late on any), and an extra rebuild costs a second.
 */
const MTIME_SLACK_MS = 2_000;

interface BuildInfo {
  root: string;
  programs: string[];
  /** When the build started (ms since the epoch): a source changed after that is newer than the bundle. */
  startedAt: number;
  /** Every source file the bundles were made of, relative to root. */
  inputs: string[];
}

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

/** The esbuild settings of every bundle, tests' and dist/'s alike. */
function settings(programs: readonly string[], outDir: string, root: string) {
  return {
    absWorkingDir: root,
    entryPoints: Object.fromEntries(programs.map((p) => [bundleName(p), path.join(root, p)])),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    // Packages stay in node_modules, so outDir must be inside the root for them to resolve.
    packages: 'external',
    sourcemap: 'linked',
    jsx: 'automatic',
    jsxImportSource: 'hono/jsx',
    plugins: [keepModuleUrls],
    logLevel: 'warning',
    metafile: true as const,
    write: false as const,
  } satisfies BuildOptions;
}

/**
 * Bundles `programs` (relative to root) into outDir. Every file is written under a temporary
 * name and renamed into place, and what an earlier build left there is removed afterwards: a
 * server still running from the folder, or a second `npm start` building beside this one,
 * never reads a half-written file.
 */
export async function buildBundles(programs: readonly string[], outDir: string, root = ROOT): Promise<void> {
  const { build } = await import('esbuild');
  const startedAt = Date.now();
  const result = await build(settings(programs, outDir, root));
  const info: BuildInfo = { root, programs: [...programs], startedAt, inputs: Object.keys(result.metafile.inputs).sort() };
  await mkdir(outDir, { recursive: true });
  const written = new Set<string>([BUILD_INFO]);
  for (const file of result.outputFiles) {
    await replaceFile(file.path, file.contents);
    written.add(path.relative(outDir, file.path));
  }
  for (const name of await readdir(outDir)) {
    if (!written.has(name) && /\.mjs(\.map)?$/.test(name)) await rm(path.join(outDir, name), { force: true });
  }
  // Last: its presence says the build is whole.
  await replaceFile(path.join(outDir, BUILD_INFO), `${JSON.stringify(info, null, 2)}\n`);
}

async function replaceFile(file: string, contents: string | Uint8Array): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, contents);
  await rename(temporary, file);
}

/**
 * Why the bundles of `programs` in dir cannot be run as they are, or null when they are up to
 * date: missing, built for other programs or another checkout, or a source read by the build
 * (or this file, which holds the settings) changed after it started. A new source file is
 * caught too, since a file it is imported from changed.
 */
export async function staleReason(dir: string, programs: readonly string[], root = ROOT): Promise<string | null> {
  let info: BuildInfo;
  try {
    info = JSON.parse(await readFile(path.join(dir, BUILD_INFO), 'utf8')) as BuildInfo;
  } catch {
    return `${path.relative(root, dir) || dir} holds no build`;
  }
  if (info.root !== root) return `it was built in ${info.root}`;
  const missing = programs.filter((p) => !info.programs.includes(p));
  if (missing.length > 0) return `it does not hold ${missing.join(', ')}`;
  for (const program of programs) {
    if (!(await exists(bundleFile(dir, program)))) return `${path.relative(root, bundleFile(dir, program))} is missing`;
  }
  const sources = [...info.inputs.map((f) => path.join(root, f)), fileURLToPath(import.meta.url)];
  for (const source of sources) {
    const changed = await stat(source).then(
      (s) => s.mtimeMs > info.startedAt - MTIME_SLACK_MS,
      () => true, // removed or renamed: what imported it changed too, or the build would fail
    );
    if (changed) return `${path.relative(root, source)} changed since the build`;
  }
  return null;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
