// npm run docs: an HTML reference per OpenAPI document (redocly build-docs, self-contained
// pages) and an index, in docs/api/ (git-ignored). The server serves the same folder.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { OPENAPI_DOCS, ROOT, bin } from './lib/specs.ts';
import { run } from './lib/run.ts';

export const DOCS_DIR = path.join(ROOT, 'docs', 'api');

export async function buildDocs(outDir: string = DOCS_DIR): Promise<void> {
  await mkdir(outDir, { recursive: true });
  for (const doc of OPENAPI_DOCS) {
    const out = path.join(outDir, `${doc.name}.html`);
    const result = await run(bin('redocly'), ['build-docs', doc.name, '-o', out]);
    if (result.code !== 0) throw new Error(`redocly build-docs ${doc.name} failed:\n${result.stderr}`);
  }
  const links = OPENAPI_DOCS.map((d) => `<li><a href="./${d.name}.html">${d.name}</a></li>`).join('\n      ');
  await writeFile(
    path.join(outDir, 'index.html'),
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
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildDocs();
  console.log(`API reference written to ${path.relative(ROOT, DOCS_DIR)}/index.html`);
}
