// npm run docs: an HTML reference per OpenAPI document (redocly build-docs, self-contained
// pages) and an index, into DOCS_DIR (default docs/api/, git-ignored), which the server
// serves as static files on /docs. `--if-stale` (npm start) builds only when the pages are
// missing or older than a spec file. The pages are built beside the folder and swapped in,
// so a running server never reads a half-built reference.
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../server/config.ts';
import { OPENAPI_DOCS, ROOT, SPEC_DIR, bin, type OpenApiDoc } from './lib/specs.ts';
import { run } from './lib/run.ts';

export const DOCS_DIR = loadConfig().docsDir;

async function renderPage(name: OpenApiDoc['name'], out: string): Promise<void> {
  const result = await run(bin('redocly'), ['build-docs', name, '-o', out]);
  if (result.code !== 0) throw new Error(`redocly build-docs ${name} failed:\n${result.stderr}`);
}

/**
 * Rebuilds one document's page (npm run dev, after a change to that document): written beside
 * it and renamed over it, so a reader gets the old page or the new one, never half of one.
 */
export async function buildDoc(name: OpenApiDoc['name'], outDir: string = DOCS_DIR): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const page = path.join(outDir, `${name}.html`);
  const scratch = `${page}.building-${process.pid}`;
  try {
    await renderPage(name, scratch);
    await rename(scratch, page);
  } finally {
    await rm(scratch, { force: true });
  }
  return page;
}

export async function buildDocs(outDir: string = DOCS_DIR): Promise<void> {
  const scratch = `${outDir}.building-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true });
  try {
    for (const doc of OPENAPI_DOCS) await renderPage(doc.name, path.join(scratch, `${doc.name}.html`));
    const links = OPENAPI_DOCS.map((d) => `<li><a href="./${d.name}.html">${d.name}</a></li>`).join('\n      ');
    await writeFile(
      path.join(scratch, 'index.html'),
      `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>API reference</title></head>
  <body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem">
    <h1>API reference</h1>
    <ul>
      ${links}
    </ul>
    <p>Webhooks and the payout-completed callback are described in <code>spec/webhooks.asyncapi.yaml</code>.</p>
  </body>
</html>
`,
    );
    await rm(outDir, { recursive: true, force: true });
    await rename(scratch, outDir);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, (await stat(path.join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

/** True when the built reference is missing or older than a spec file or redocly.yaml. */
export async function docsStale(outDir: string = DOCS_DIR): Promise<boolean> {
  const index = path.join(outDir, 'index.html');
  if (!existsSync(index)) return true;
  const built = (await stat(index)).mtimeMs;
  const sources = Math.max(await newestMtime(SPEC_DIR), (await stat(path.join(ROOT, 'redocly.yaml'))).mtimeMs);
  return sources > built;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--if-stale') && !(await docsStale())) process.exit(0);
  const started = Date.now();
  await buildDocs();
  console.log(`API reference written to ${path.relative(process.cwd(), DOCS_DIR) || '.'}/index.html in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
