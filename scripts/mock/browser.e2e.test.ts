// The browser recipe of docs/mock.md, in a real browser: a Vite app whose dev server proxies
// /api to the mock and adds the credentials (no CORS: the page calls its own origin and never
// holds the key), opened in headless Chromium. Against
// the stateful mock it creates an order and reads it back; against the stateless one it gets the
// documented examples.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDocument } from '../../server/contract/operations.ts';
import { chromiumExecutable } from '../../server/testing/chromium.ts';
import { freePort } from '../../server/testing/child-server.ts';
import { startMock, type RunningMock } from './start.ts';
import { startStatefulMock, type RunningStatefulMock } from './stateful.ts';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const GIVEN = { apiKey: 'pk_test_vite_app', apiHash: 'sk_test_vite_app_0123456789abcdefghijkl' };

// The app: creates an order through /api, reads it back, and shows both answers. It holds no
// credential: the dev server's proxy adds them (Vite's proxy `headers` option).
const APP = `
const headers = { 'content-type': 'application/json' };
const created = await fetch('/api/v2/orders', { method: 'POST', headers, body: JSON.stringify({ merchantReference: 'cart-browser', amountMinor: 1234 }) });
const order = await created.json();
const read = await fetch('/api/v2/orders/' + order.orderId, { headers });
document.body.dataset.result = JSON.stringify({ created: created.status, order, read: read.status, readBack: await read.json() });
`;

let dir: string;
let browser: Browser;
let stateless: RunningMock;
let stateful: RunningStatefulMock;
const vites: ViteDevServer[] = [];

/** The app on a Vite dev server whose proxy sends /api to `target` (the recipe of docs/mock.md). */
async function viteApp(target: string): Promise<string> {
  const port = await freePort();
  const server = await createServer({
    root: dir,
    configFile: false,
    logLevel: 'silent',
    server: {
      host: '127.0.0.1',
      port,
      strictPort: true,
      proxy: { '/api': { target, rewrite: (p) => p.replace(/^\/api/, ''), headers: { 'x-api-key': GIVEN.apiKey, 'x-api-hash': GIVEN.apiHash } } },
    },
  });
  await server.listen();
  vites.push(server);
  return `http://127.0.0.1:${port}/`;
}

async function resultOf(url: string): Promise<{ created: number; order: { orderId: string }; read: number; readBack: Record<string, unknown> }> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    // Page code as strings: this project's TypeScript has no DOM library.
    await page.waitForFunction('document.body.dataset.result !== undefined', undefined, { timeout: 60_000 });
    return JSON.parse(String(await page.evaluate('document.body.dataset.result')));
  } finally {
    await page.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'mock-vite-app-'));
  await writeFile(path.join(dir, 'index.html'), '<!doctype html><html><body><script type="module" src="/main.js"></script></body></html>');
  await writeFile(path.join(dir, 'main.js'), APP);
  [stateless, stateful] = await Promise.all([startMock({ port: 0 }), startStatefulMock({ port: 0, given: GIVEN })]);
  browser = await chromium.launch({ executablePath: await chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const v of vites) await v.close();
  await stateless?.close();
  await stateful?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a Vite app through its dev-server proxy, in Chromium', () => {
  it('creates an order and reads it back from the stateful mock', async () => {
    const r = await resultOf(await viteApp(stateful.url));
    expect(r.created).toBe(201);
    expect(r.read).toBe(200);
    expect(r.readBack).toMatchObject({ orderId: r.order.orderId, merchantReference: 'cart-browser', amountMinor: 1234 });
  }, 120_000);

  it('gets the documented examples from the stateless mock', async () => {
    const r = await resultOf(await viteApp(stateless.url));
    const get = (((loadDocument('orders').paths as Record<string, Record<string, unknown>>)['/v2/orders/{orderId}']?.get as { responses: Record<string, { content: Record<string, { examples: Record<string, { value: unknown }> }> }> }).responses['200']?.content['application/json']?.examples) ?? {};
    expect(r.created).toBe(201);
    expect(r.read).toBe(200);
    expect(r.readBack).toEqual(Object.values(get)[0]?.value);
  }, 120_000);
});
