// /docs serves the pages `npm run docs` built, and says how to build them when they are missing.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/harness.ts';
import { expectProblem, sendRaw } from '../testing/raw-http.ts';

let server: TestServer;
let docsDir: string;

beforeAll(async () => {
  docsDir = await mkdtemp(path.join(os.tmpdir(), 'docs-test-'));
  server = await startTestServer({ env: { DOCS_DIR: docsDir } });
});

afterAll(async () => {
  await server?.close();
  await rm(docsDir, { recursive: true, force: true });
});

describe('/docs', () => {
  it('answers 503 docs-not-built, naming `npm run docs`, while the pages are missing', async () => {
    const a = await sendRaw(server.url, null, 'GET', '/docs/index.html');
    expectProblem(a, 503, 'docs-not-built');
    expect(a.body.detail).toContain('npm run docs');
    expect(a.body.detail).not.toContain(docsDir);
  });

  it('serves the built pages as they are on disk, and redirects /docs to the index', async () => {
    await writeFile(path.join(docsDir, 'index.html'), '<!doctype html><title>API reference</title><p>built</p>');
    await writeFile(path.join(docsDir, 'orders.html'), '<!doctype html><title>orders</title>');
    const index = await fetch(`${server.url}/docs/index.html`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await index.text()).toContain('<p>built</p>');
    expect((await fetch(`${server.url}/docs/orders.html`)).status).toBe(200);
    await writeFile(path.join(docsDir, 'webhooks.html'), '<!doctype html><title>webhooks</title>');
    expect((await fetch(`${server.url}/docs/webhooks.html`)).status).toBe(200);
    const root = await fetch(`${server.url}/docs`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/docs/index.html');
  });

  it('serves the contract documents as JSON: /openapi/<api>.json and /asyncapi/webhooks.json', async () => {
    const orders = await fetch(`${server.url}/openapi/orders.json`);
    expect(orders.status).toBe(200);
    expect(((await orders.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);
    const webhooks = await fetch(`${server.url}/asyncapi/webhooks.json`);
    expect(webhooks.status).toBe(200);
    expect(webhooks.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = (await webhooks.json()) as { asyncapi: string; components: { messages: Record<string, { name: string }> } };
    expect(doc.asyncapi).toMatch(/^3\./);
    expect(Object.values(doc.components.messages).map((m) => m.name)).toContain('order.payment_review_required');
  });

  it('serves no other file from the folder', async () => {
    await writeFile(path.join(docsDir, 'secret.html'), 'not a page');
    expectProblem(await sendRaw(server.url, null, 'GET', '/docs/secret.html'), 404, 'route-not-found');
    expectProblem(await sendRaw(server.url, null, 'GET', '/docs/..%2Fpackage.json'), 404, 'route-not-found');
  });
});
