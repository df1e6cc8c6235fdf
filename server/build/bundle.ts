// The server's programs as plain JavaScript, built one way for everyone: `npm run build` writes
// dist/, which `npm start` and `npm run admin` run, and the tests' global setup writes a folder
// per run (server/testing/server-bundle.ts), so the program deployed is the program tested and
// neither pays a transpiler at start-up.
//
// Each build records what it was made of, by content (build.json): `--if-stale` (npm start)
// rebuilds only when a source's content changed, a bundle is missing, or the checkout moved (the
// bundles name their source files by absolute path, see keepModuleUrls). A build is written into
// a folder of its own and swapped in whole (swap.ts).
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';
import { SENDER_THREAD_PROGRAM } from '../delivery/thread/program.ts';
import { contentHash, firstChanged, hashFiles } from './fingerprint.ts';
import { bundleFile, bundleName } from './layout.ts';
import { makeCurrent, newBuildFolder } from './swap.ts';

export { bundleFile, bundleName };

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What `npm run build` writes and `npm start` runs. */
export const DIST_DIR = path.join(ROOT, 'dist');

/** The programs `npm run build` bundles into DIST_DIR, relative to the root (the server's sending thread among them). */
export const SERVED_PROGRAMS = ['server/main.ts', SENDER_THREAD_PROGRAM, 'server/admin/cli.ts'] as const;

/** The record of a build, beside its bundles. */
const BUILD_INFO = 'build.json';

/** This file: it holds the settings, so a build made with other settings is stale. */
const SETTINGS_FILE = fileURLToPath(import.meta.url);

interface BuildInfo {
  root: string;
  programs: string[];
  /** The content hash of the settings (this file) the build was made with. */
  settings: string;
  /** Every source file the bundles were made of, relative to root, with its content hash. */
  inputs: Record<string, string | null>;
}

/**
 * Keeps each module's own import.meta.url: the code finds its files (migrations, generated/,
 * the portal's assets) relative to its source file, which a bundle would otherwise move. Hashes
 * what it read into `read` (absolute path → hash): the build is recorded as made of the text it
 * bundled, even when a file is saved while it runs.
 */
function keepModuleUrls(read: Map<string, string>): Plugin {
  return {
    name: 'keep-module-urls',
    setup(build) {
      build.onLoad({ filter: /\.tsx?$/ }, async (args) => {
        const text = await readFile(args.path, 'utf8');
        read.set(args.path, contentHash(text));
        return {
          contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
          loader: args.path.endsWith('.tsx') ? 'tsx' : 'ts',
        };
      });
    },
  };
}

/** The esbuild settings of every bundle, tests' and dist/'s alike. */
function settings(programs: readonly string[], outDir: string, root: string, read: Map<string, string>) {
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
    plugins: [keepModuleUrls(read)],
    logLevel: 'warning',
    metafile: true as const,
    write: false as const,
  } satisfies BuildOptions;
}

/**
 * Bundles `programs` (relative to root) into a new folder and makes outDir that folder (swap.ts):
 * a server still running from the old build, or a second `npm start` building beside this one,
 * never reads a half-written file or loses a chunk. build.json is written last in the folder.
 */
export async function buildBundles(programs: readonly string[], outDir: string, root = ROOT): Promise<void> {
  const { build } = await import('esbuild');
  const folder = await newBuildFolder(outDir);
  try {
    const read = new Map<string, string>();
    const result = await build(settings(programs, folder, root, read));
    for (const file of result.outputFiles) await writeFile(file.path, file.contents);
    const inputs = Object.keys(result.metafile.inputs).sort();
    const others = await hashFiles(root, inputs.filter((f) => !read.has(path.join(root, f))));
    const info: BuildInfo = {
      root,
      programs: [...programs],
      settings: contentHash(await readFile(SETTINGS_FILE)),
      inputs: Object.fromEntries(inputs.map((f) => [f, read.get(path.join(root, f)) ?? others[f] ?? null])),
    };
    await writeFile(path.join(folder, BUILD_INFO), `${JSON.stringify(info, null, 2)}\n`);
  } catch (err) {
    await rm(folder, { recursive: true, force: true });
    throw err;
  }
  await makeCurrent(outDir, folder);
}

/**
 * Why the bundles of `programs` in dir cannot be run as they are, or null when they are up to
 * date: missing, built for other programs, another checkout or other settings (this file), or
 * the content of a source read by the build changed (or it is gone). A new source file is
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
  if (info.settings !== contentHash(await readFile(SETTINGS_FILE))) return `${path.relative(root, SETTINGS_FILE)} changed since the build`;
  const changed = await firstChanged(root, info.inputs);
  if (changed !== null) return `${changed} changed since the build`;
  return null;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
