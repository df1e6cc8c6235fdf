// The HTML API reference, served as the static pages `npm run docs` builds (redocly, a
// devDependency, never runs here), and the bundled contract documents.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';
import { API_NAMES, loadDocument, type ApiName } from '../contract/operations.ts';
import { AppError } from '../domain/errors.ts';
import type { AppEnv } from './app-env.ts';

// The pages `npm run docs` builds: the landing page, one per OpenAPI document, and the webhooks (AsyncAPI).
const PAGES = new Set(['index', ...API_NAMES, 'webhooks']);
/** The resolved AsyncAPI document `npm run generate` writes, as /openapi/<api>.json serves the OpenAPI ones. */
const ASYNCAPI_JSON = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'generated', 'asyncapi', 'webhooks.json');

export function mountDocs(app: Hono<AppEnv>, docsDir: string): void {
  app.get('/docs', (c) => c.redirect('/docs/index.html'));
  app.get('/docs/:page{[a-z]+\\.html}', async (c) => {
    const page = c.req.param('page').replace(/\.html$/, '');
    if (!PAGES.has(page)) return c.notFound();
    let html: string;
    try {
      html = await readFile(path.join(docsDir, `${page}.html`), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new AppError('docs-not-built', 'The API reference has not been built on this server: run `npm run docs` there, then reload.');
    }
    return c.html(html);
  });
  app.get('/openapi/:api{[a-z]+\\.json}', (c) => {
    const api = c.req.param('api').replace(/\.json$/, '') as ApiName;
    if (!API_NAMES.includes(api)) return c.notFound();
    return c.json(loadDocument(api));
  });
  app.get('/asyncapi/webhooks.json', (c) => c.json(JSON.parse(readFileSync(ASYNCAPI_JSON, 'utf8')) as Record<string, unknown>));
}
