// The built reference in a real browser: `npm run docs` builds the webhooks page and the landing
// page into a temporary folder, the server serves them on /docs, and headless Chromium (Debian's,
// else the npm package's: server/testing/chromium.ts) reads them as a merchant would. Screenshots
// go to test-results/docs/.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumExecutable } from '../server/testing/chromium.ts';
import { startTestServer, type TestServer } from '../server/testing/harness.ts';
import { DOCUMENTS, buildPages } from './docs.ts';
import { readDocumentInfo } from './lib/docs-index.ts';
import { signedExamples } from './lib/signature-vectors.ts';
import { ASYNCAPI_DOC } from './lib/specs.ts';

const SHOTS = fileURLToPath(new URL('../test-results/docs/', import.meta.url));
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

let docsDir: string;
let server: TestServer;
let browser: Browser;
let page: Page;
const offline: string[] = [];

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  docsDir = await mkdtemp(path.join(os.tmpdir(), 'docs-e2e-'));
  await buildPages(['webhooks'], docsDir);
  server = await startTestServer({ env: { DOCS_DIR: docsDir } });
  browser = await chromium.launch({ executablePath: await chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // The pages must render from the server alone: note every request that leaves it.
  page.on('request', (r) => {
    if (!r.url().startsWith(server.url) && !r.url().startsWith('data:')) offline.push(r.url());
  });
  await page.route((url) => !url.href.startsWith(server.url) && url.protocol !== 'data:', (route) => route.abort());
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (docsDir) await rm(docsDir, { recursive: true, force: true });
});

const shot = (name: string, fullPage = false) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });

describe('/docs in Chromium', () => {
  it('the landing page lists every document with its title, purpose and links, from the specs', async () => {
    await page.goto(`${server.url}/docs`);
    await expect.poll(() => page.title()).toBe('Payments service reference');
    for (const doc of DOCUMENTS) {
      const info = await readDocumentInfo(doc.file);
      const section = page.locator(`section#${doc.name}`);
      await expect.poll(() => section.locator('h2').innerText()).toBe(info.title);
      expect(await section.locator('.meta').innerText()).toContain(`version ${info.version}`);
      expect((await section.locator('.purpose').innerText()).length).toBeGreaterThan(40);
      expect(await section.locator('a.primary').getAttribute('href')).toBe(`./${doc.name}.html`);
    }
    expect(await page.locator('section#webhooks .purpose').innerText()).toContain('What the service sends');
    await shot('01-index', true);
  });

  it('the webhooks page shows the signature worked example, and order.payment_review_required with its fields and example', async () => {
    await page.goto(`${server.url}/docs/index.html`);
    await Promise.all([page.waitForURL('**/docs/webhooks.html**'), page.locator('section#webhooks a.primary').click()]);
    await page.getByRole('heading', { name: /Payments Service Webhooks/ }).first().waitFor();
    await shot('02-webhooks-top');

    // The worked example, as docs-webhooks.ts computed it with the signing code.
    const worked = (await signedExamples(ASYNCAPI_DOC)).find((e) => e.message === 'order.payment_review_required');
    if (!worked) throw new Error('the document has no order.payment_review_required example');
    const v1 = worked.signature.split('v1=')[1] ?? 'missing';
    await page.getByRole('link', { name: 'Worked example' }).first().click();
    await page.getByRole('heading', { name: 'Worked example' }).waitFor();
    await expect.poll(() => page.getByText(v1).first().isVisible()).toBe(true);
    await expect.poll(() => page.getByText(worked.secret).first().isVisible()).toBe(true);
    expect(await page.getByText(String(worked.timestamp), { exact: true }).first().isVisible()).toBe(true);
    await shot('03-worked-example');

    // The order webhooks channel, its message picker set to order.payment_review_required.
    await page.getByRole('link', { name: 'orders', exact: true }).first().click();
    await page.getByRole('link', { name: /Order webhooks/ }).first().click();
    await page.getByRole('heading', { name: 'Order webhooks' }).first().waitFor();
    await page.getByRole('button', { name: 'Order created' }).first().click();
    await page.getByRole('menuitem', { name: 'Order payment review required' }).click();
    const summary = page.getByText('The payment state changed to review_required; stop automatic fulfilment.');
    await summary.waitFor();
    await summary.scrollIntoViewIfNeeded();
    // The example: its summary in the example picker, its payload beside the message.
    const example = worked.example;
    const exampleSummary = (await signedExamples(ASYNCAPI_DOC)).find((e) => e.example === example)?.summary ?? '';
    await expect.poll(() => page.getByText(exampleSummary.slice(0, 30)).first().isVisible()).toBe(true);
    await expect.poll(() => page.getByText('"deposit_revoked"').first().isVisible()).toBe(true);
    await shot('04-payment-review-required');

    // The payload, field by field: name, type, presence and meaning, the nested `data` fields included.
    await page.getByText('reviewReason says why').scrollIntoViewIfNeeded();
    await shot('05-payload-fields');
    await page.getByText('reviewReason', { exact: true }).last().scrollIntoViewIfNeeded();
    await shot('06-review-reason-field');
    const text = (await page.locator('body').innerText()).replace(/\u200b/g, '');
    const fieldsFrom = text.search(/Payload\s*application\/json/);
    expect(fieldsFrom).toBeGreaterThan(-1);
    const fields = text.slice(fieldsFrom);
    for (const field of ['id', 'type', 'apiVersion', 'createdAt', 'data', 'data.orderId', 'data.status', 'data.reviewReason']) {
      expect(fields).toMatch(new RegExp(`\\n${field.replace('.', '\\.')}\\n[^\\n]*\\n`));
    }
    expect(fields).toMatch(/\ndata\.reviewReason\n[\s\S]{0,300}required/);
    expect(fields).toContain('Stable event id');
    // Only the "API docs by Redocly" badge's logo comes from the CDN (build-docs --inlineBundle says so);
    // it is refused here and the page reads the same without it.
    expect(offline.filter((url) => !/^https:\/\/cdn\.redoc\.ly\/redoc\/logo-[a-z-]+\.svg$/.test(url))).toEqual([]);
  });
});
