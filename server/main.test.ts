// The bundled server (the file `npm start` runs) loads no build tooling: neither its entry nor
// any chunk it imports, at start or lazily, holds a line of the bundler (server/build/bundle.ts)
// or of esbuild. Read from the run's bundles, built as `npm run build` builds dist/.
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { SERVER_NODE_FLAGS, bundleFile, serverNodeArgs } from './build/layout.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The files of a folder of bundles that `entry` loads, itself included: its static and dynamic imports, followed. */
async function loadedFiles(entry: string): Promise<string[]> {
  const seen = new Set<string>();
  // From its real folder, as node runs it: the folder of bundles is a link to it (build/swap.ts).
  const queue = [await realpath(entry)];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const code = await readFile(file, 'utf8');
    for (const [, specifier] of code.matchAll(/(?:from\s*|import\s*\(\s*)"(\.\/[^"]+\.mjs)"/g)) queue.push(path.join(path.dirname(file), specifier!));
  }
  return [...seen];
}

/** The source files a bundle was made of, relative to the repository root, from its source map. */
async function sourcesOf(file: string): Promise<string[]> {
  const map = JSON.parse(await readFile(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((s) => path.relative(ROOT, path.resolve(path.dirname(file), s)));
}

describe('the bundled server', () => {
  it('loads no build tooling: no chunk it imports, at start or lazily, is made of the bundler or esbuild', async () => {
    const files = await loadedFiles(bundleFile(inject('childBundles'), 'server/main.ts'));
    // The entry, its shared chunks and the lazily loaded ones (the PostgreSQL store, the heartbeat).
    expect(files.length).toBeGreaterThan(2);
    const sources = (await Promise.all(files.map(sourcesOf))).flat();
    expect(sources).toContain('server/main.ts');
    expect(sources).toContain('server/build/layout.ts');
    expect(sources.filter((s) => s.startsWith('server/build/bundle') || s.includes('node_modules/esbuild'))).toEqual([]);
  });
});

describe('the V8 flags the server runs with', () => {
  it("are npm start's, in the order serverNodeArgs gives them (tests, benches and the cluster start the server through it)", async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    const started = /exec node (.+)$/.exec(pkg.scripts.start)?.[1]?.split(' ');
    expect(started).toEqual(serverNodeArgs('dist'));
    expect(SERVER_NODE_FLAGS.length).toBeGreaterThan(0);
  });
});
