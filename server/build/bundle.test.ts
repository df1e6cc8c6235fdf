// The build's record of itself, on a scratch program of three files: up to date right after a
// build, stale for each reason `npm start` must rebuild on, whole after a rebuild (an older
// build's chunks gone), and the bundle runs with its modules' own import.meta.url.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, unlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildBundles, bundleFile, bundleName, staleReason } from './bundle.ts';

const PROGRAMS = ['main.ts'];
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
    'main.ts': "import { where } from './lib.ts';\nconst { lazy } = await import('./lazy.ts');\nconsole.log(JSON.stringify({ where, lazy: lazy() }));\n",
    'lib.ts': 'export const where: string = import.meta.url;\n',
    'lazy.ts': "export const lazy = (): string => 'one';\n",
  });
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('buildBundles and staleReason', () => {
  it('built: up to date, and the bundle runs with each module’s own import.meta.url', async () => {
    expect(await staleReason(out, PROGRAMS, root)).toBe('dist holds no build');
    await buildBundles(PROGRAMS, out, root);
    expect(await staleReason(out, PROGRAMS, root)).toBeNull();
    expect(bundleFile(out, 'server/main.ts')).toBe(path.join(out, 'server__main.mjs'));
    expect(bundleName('client/cli/bin.ts')).toBe('client__cli__bin');
    const printed = JSON.parse(execFileSync(process.execPath, [bundleFile(out, 'main.ts')], { encoding: 'utf8' })) as unknown;
    expect(printed).toEqual({ where: pathToFileURL(path.join(root, 'lib.ts')).href, lazy: 'one' });
  });

  it('a source saved after the build: stale, naming it', async () => {
    await buildBundles(PROGRAMS, out, root);
    const now = new Date();
    await utimes(path.join(root, 'lazy.ts'), now, now);
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

  it('a rebuild leaves only its own files: the older build’s chunk is gone, the new one runs', async () => {
    await buildBundles(PROGRAMS, out, root);
    const before = await readdir(out);
    await writeSources({ 'lazy.ts': "export const lazy = (): string => 'two';\n" });
    await buildBundles(PROGRAMS, out, root);
    const after = await readdir(out);
    const chunks = (names: string[]) => names.filter((n) => n.startsWith('lazy-') && n.endsWith('.mjs'));
    expect(chunks(before)).toHaveLength(1);
    expect(chunks(after)).toHaveLength(1);
    expect(chunks(after)).not.toEqual(chunks(before));
    expect(after.filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(after.sort()).toEqual(['build.json', ...chunks(after), ...chunks(after).map((c) => `${c}.map`), 'main.mjs', 'main.mjs.map'].sort());
    expect(JSON.parse(execFileSync(process.execPath, [bundleFile(out, 'main.ts')], { encoding: 'utf8' }))).toMatchObject({ lazy: 'two' });
  });
});
