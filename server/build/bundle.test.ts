// The build's record of itself, on a scratch program of three files: up to date right after a
// build and after a source is saved unchanged, stale for each reason `npm start` must rebuild
// on, swapped in whole by a rebuild (a program started from the old build keeps its lazily
// loaded chunk, a failed rebuild leaves the old build), and the bundle runs with its modules'
// own import.meta.url.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, unlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildBundles, bundleFile, bundleName, staleReason } from './bundle.ts';
import { buildsFolder } from './swap.ts';

const PROGRAMS = ['main.ts'];
/** Says it started, then loads its lazy chunk when a line comes in on stdin, and prints what it found. */
const MAIN = [
  "import { where } from './lib.ts';",
  "console.error('started');",
  "process.stdin.once('data', async () => {",
  "  const { lazy } = await import('./lazy.ts');",
  '  console.log(JSON.stringify({ where, lazy: lazy() }));',
  '  process.exit(0);',
  '});',
  '',
].join('\n');
let root: string;
let out: string;

/** Writes `files` under root, dated an hour ago: saved well before any build. */
async function writeSources(files: Record<string, string>): Promise<void> {
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (const [name, text] of Object.entries(files)) {
    await writeFile(path.join(root, name), text);
    await utimes(path.join(root, name), anHourAgo, anHourAgo);
  }
}

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'bundle-'));
  out = path.join(root, 'dist');
  await writeSources({
    'main.ts': MAIN,
    'lib.ts': 'export const where: string = import.meta.url;\n',
    'lazy.ts': "export const lazy = (): string => 'one';\n",
  });
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** Runs the program from out, has it load its lazy chunk, and returns what it printed. */
function runMain(): unknown {
  return JSON.parse(execFileSync(process.execPath, [bundleFile(out, 'main.ts')], { encoding: 'utf8', input: 'go\n', stdio: ['pipe', 'pipe', 'ignore'] }));
}

describe('buildBundles and staleReason', () => {
  it('built: up to date, and the bundle runs with each module’s own import.meta.url', async () => {
    expect(await staleReason(out, PROGRAMS, root)).toBe('dist holds no build');
    await buildBundles(PROGRAMS, out, root);
    expect(await staleReason(out, PROGRAMS, root)).toBeNull();
    expect(bundleFile(out, 'server/main.ts')).toBe(path.join(out, 'server__main.mjs'));
    expect(bundleName('client/cli/bin.ts')).toBe('client__cli__bin');
    const printed = runMain();
    expect(printed).toEqual({ where: pathToFileURL(path.join(root, 'lib.ts')).href, lazy: 'one' });
  });

  it('a source saved again unchanged: still up to date; its content changed: stale, naming it', async () => {
    await buildBundles(PROGRAMS, out, root);
    const now = new Date();
    await utimes(path.join(root, 'lazy.ts'), now, now);
    expect(await staleReason(out, PROGRAMS, root)).toBeNull();
    await writeSources({ 'lazy.ts': "export const lazy = (): string => 'two';\n" });
    expect(await staleReason(out, PROGRAMS, root)).toBe('lazy.ts changed since the build');
  });

  it('a source removed, a bundle missing, a program not built, another checkout: stale, each said', async () => {
    await buildBundles(PROGRAMS, out, root);
    expect(await staleReason(out, [...PROGRAMS, 'other.ts'], root)).toBe('it does not hold other.ts');
    expect(await staleReason(out, PROGRAMS, path.join(root, 'moved'))).toBe(`it was built in ${root}`);
    await unlink(path.join(root, 'lib.ts'));
    expect(await staleReason(out, PROGRAMS, root)).toBe('lib.ts changed since the build');
    await unlink(bundleFile(out, 'main.ts'));
    expect(await staleReason(out, PROGRAMS, root)).toBe(`${path.join('dist', 'main.mjs')} is missing`);
  });

  it('a rebuild is swapped in whole: a program started from the old build still loads its own lazy chunk', async () => {
    await buildBundles(PROGRAMS, out, root);
    const old = await realpath(out);
    const oldFiles = await readdir(old);
    const running = spawn(process.execPath, [bundleFile(out, 'main.ts')], { stdio: ['pipe', 'pipe', 'pipe'] });
    await once(running.stderr, 'data'); // 'started': its entry is loaded, its lazy chunk not yet
    await writeSources({ 'lazy.ts': "export const lazy = (): string => 'two';\n" });
    await buildBundles(PROGRAMS, out, root);
    let printed = '';
    running.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    running.stdin.end('go\n');
    const [code] = (await once(running, 'close')) as [number | null];
    expect({ code, printed: printed ? (JSON.parse(printed) as unknown) : null }).toMatchObject({ code: 0, printed: { lazy: 'one' } });
    // The old folder is as it was; out is another, holding only its own build, which runs.
    expect(await readdir(old)).toEqual(oldFiles);
    expect(await realpath(out)).not.toBe(old);
    expect((await lstat(out)).isSymbolicLink()).toBe(true);
    const chunks = (names: string[]) => names.filter((n) => n.startsWith('lazy-') && n.endsWith('.mjs'));
    const after = await readdir(out);
    expect(chunks(after)).toHaveLength(1);
    expect(chunks(after)).not.toEqual(chunks(oldFiles));
    expect(after.sort()).toEqual(['build.json', ...chunks(after), ...chunks(after).map((c) => `${c}.map`), 'main.mjs', 'main.mjs.map'].sort());
    expect(runMain()).toMatchObject({ lazy: 'two' });
  });

  it('a rebuild that fails leaves the old build in place, whole, and no folder of its own', async () => {
    await buildBundles(PROGRAMS, out, root);
    const old = await realpath(out);
    const record = await readFile(path.join(out, 'build.json'), 'utf8');
    await writeSources({ 'lazy.ts': 'export const lazy = (: string => ;\n' });
    await expect(buildBundles(PROGRAMS, out, root)).rejects.toThrow(/Build failed/);
    expect(await realpath(out)).toBe(old);
    expect(await readdir(buildsFolder(out))).toEqual([path.basename(old)]);
    expect(await readFile(path.join(out, 'build.json'), 'utf8')).toBe(record);
    expect(runMain()).toMatchObject({ lazy: 'one' });
  });

  it('keeps the two builds before the current one, for programs still running from them; removes older ones', async () => {
    const folders: string[] = [];
    for (let i = 0; i < 4; i++) {
      await buildBundles(PROGRAMS, out, root);
      folders.push(path.basename(await realpath(out)));
    }
    expect((await readdir(buildsFolder(out))).sort()).toEqual(folders.slice(1).sort());
  });

  it('a folder at out from before builds were swapped in is replaced the same way', async () => {
    await mkdir(out);
    await writeFile(path.join(out, 'main.mjs'), 'console.log("old");\n');
    await buildBundles(PROGRAMS, out, root);
    expect((await lstat(out)).isSymbolicLink()).toBe(true);
    expect(runMain()).toMatchObject({ lazy: 'one' });
    expect(await readdir(buildsFolder(out))).toHaveLength(2);
  });
});
