// The HTML API reference (redocly build-docs, built on first request and cached in docs/api/)
// and the bundled contract documents, served beside the APIs.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Hono } from 'hono';
import { API_NAMES, loadDocument, type ApiName } from '../contract/operations.ts';
import { buildDocs, DOCS_DIR } from '../../scripts/docs.ts';
import type { AppEnv } from './app-env.ts';

let building: Promise<void> | null = null;

async function ensureDocs(): Promise<void> {
  if (existsSync(path.join(DOCS_DIR, 'index.html'))) return;
  building ??= buildDocs().finally(() => {
    building = null;
  });
  await building;
}

const PAGES = new Set(['index', ...API_NAMES]);

export function mountDocs(app: Hono<AppEnv>): void {
  app.get('/docs', (c) => c.redirect('/docs/index.html'));
  app.get('/docs/:page{[a-z]+\\.html}', async (c) => {
    const page = c.req.param('page').replace(/\.html$/, '');
    if (!PAGES.has(page)) return c.notFound();
    await ensureDocs();
    return c.html(await readFile(path.join(DOCS_DIR, `${page}.html`), 'utf8'));
  });
  app.get('/openapi/:api{[a-z]+\\.json}', (c) => {
    const api = c.req.param('api').replace(/\.json$/, '') as ApiName;
    if (!API_NAMES.includes(api)) return c.notFound();
    return c.json(loadDocument(api));
  });
}
