// The portal in a real browser: headless Chromium (Debian's, else the npm package's: see
// server/testing/chromium.ts) driven by playwright-core against the real server and a
// loopback receiver. One test walks the whole webhook flow in order; screenshots of the main
// pages go to test-results/portal/.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client/webhooks/verify.ts';
import { createMember } from '../domain/admin.ts';
import { answer, startReceiver, type Receiver } from '../delivery/testing.ts';
import { chromiumExecutable } from '../testing/chromium.ts';
import { CONTENT_SECURITY_POLICY } from './mount.ts';
import { CHROMIUM_ARGS, SkewClock, startPortalTestServer, type PortalTestServer } from './testing.ts';
import { until } from '../../testing/until.ts';

const SHOTS = fileURLToPath(new URL('../../test-results/portal/', import.meta.url));
const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>';


let server: PortalTestServer;
let receiver: Receiver;
let browser: Browser;
const clock = new SkewClock();

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  server = await startPortalTestServer({ clock, env: { WEBHOOK_RETRY_SCALE: '0.00001' } });
  receiver = await startReceiver();
  // launch() gives every run a fresh temporary user-data dir (no profile, no cache).
  browser = await chromium.launch({ executablePath: await chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.close();
});

interface Watch {
  dialogs: string[];
  /** Content-Security-Policy violations. */
  consoleErrors: string[];
}

async function newPage(context: BrowserContext): Promise<{ page: Page; watch: Watch }> {
  const page = await context.newPage();
  const watch: Watch = { dialogs: [], consoleErrors: [] };
  page.on('dialog', (d) => {
    watch.dialogs.push(d.message());
    void d.dismiss();
  });
  // A blocked script, style or connection is logged as a console error naming the policy.
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) watch.consoleErrors.push(m.text());
  });
  return { page, watch };
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${server.portalUrl}/portal/sign-in`);
  await page.fill('#token', token);
  await Promise.all([page.waitForURL('**/portal/webhooks'), page.click('button[type=submit]')]);
}

/** Reloads the page until `check` passes (the detail page does not poll by itself). */
async function reloadUntil(page: Page, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  let first = true;
  await until(
    async () => {
      if (!first) await page.reload();
      first = false;
      return check();
    },
    () => `the condition on ${page.url()}`,
    { timeoutMs, everyMs: 250 },
  );
}

describe('developer portal in a browser', () => {
  it('walks the webhook flow: sign in, add, secret, test, failure and retry, search, rotate, disable', { timeout: 180_000 }, async () => {
    const t = await server.newTenant('Portal Browser Merchant');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.portalUrl });
    const { page, watch } = await newPage(context);

    // ---- sign in ------------------------------------------------------------------------
    const signInPage = await page.goto(`${server.portalUrl}/portal/sign-in`);
    expect(signInPage?.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    await shot(page, '01-sign-in');
    await page.fill('#token', 'mt_not-a-real-token');
    await page.click('button[type=submit]');
    await expect.poll(() => page.getByTestId('sign-in-error').textContent()).toContain('not recognised');
    await page.fill('#token', t.memberToken);
    await Promise.all([page.waitForURL('**/portal/webhooks'), page.click('button[type=submit]')]);
    expect(await page.getByTestId('environment').textContent()).toBe('test');
    expect(await page.getByTestId('no-endpoint').isVisible()).toBe(true);
    await shot(page, '02-webhooks-empty');

    // ---- add an endpoint: a refused URL names the rule, then the receiver's URL ----------
    await page.getByTestId('add-webhook').click();
    await page.fill('#url', 'https://10.20.30.40/payments/webhooks');
    await page.getByTestId('create-endpoint').click();
    expect(await page.getByTestId('refused-rule').textContent()).toBe('private-address');
    await shot(page, '03-add-webhook-refused');
    await page.fill('#url', `${receiver.url}/payments/webhooks`);
    const [created] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/portal/webhooks/endpoints')),
      page.getByTestId('create-endpoint').click(),
    ]);
    expect(created.status()).toBe(200);
    expect(created.headers()['cache-control']).toBe('no-store');

    // ---- the secret, shown once, copied ------------------------------------------------------
    const secret = (await page.getByTestId('signing-secret').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
    expect(page.url()).not.toContain(secret);
    expect(await page.getByTestId('secret-warning').textContent()).toContain('you will not see it again');
    await page.getByTestId('copy-secret').click();
    await expect.poll(() => page.getByTestId('copy-secret').textContent()).toBe('Copied');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await shot(page, '04-secret-once');
    // Gone after a reload (the reload re-posts the form, which cannot create a second endpoint)
    // and on every other page.
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    await page.goto(`${server.portalUrl}/portal/webhooks`);
    expect(await page.content()).not.toContain(secret);
    expect(await page.getByTestId('endpoint-url').textContent()).toBe(`${receiver.url}/payments/webhooks`);

    // ---- a rate cap on the card, then removed by emptying its field ---------------------------
    const cap = page.getByTestId('endpoint-max-per-second');
    expect(await cap.textContent()).toBe('No cap');
    await page.getByTestId('max-per-second').fill('20');
    await page.getByTestId('change-scheme').click();
    await expect.poll(() => cap.textContent()).toBe('At most 20 a second');
    await page.getByTestId('max-per-second').fill('');
    await page.getByTestId('change-scheme').click();
    await expect.poll(() => cap.textContent()).toBe('No cap');

    // ---- send a test webhook: Last test moves on without a reload ---------------------------
    receiver.handle(async (_req, res) => {
      await new Promise((r) => setTimeout(r, 1500));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"received":true}');
    });
    await page.getByTestId('send-test').click();
    await page.waitForURL('**/portal/webhooks?done=test-sent*');
    await page.evaluate('window.__noReload = true');
    const first = await page.locator('[data-testid=last-test] .badge').getAttribute('data-progress');
    expect(['queued', 'sending']).toContain(first);
    await page.locator('[data-testid=last-test] .badge[data-progress=delivered]').waitFor({ timeout: 15_000 });
    expect(await page.evaluate('window.__noReload === true')).toBe(true);
    expect(await page.locator('[data-testid=last-test] .badge__label').textContent()).toBe('Delivered');
    // The activity row follows without a reload too.
    await expect.poll(() => page.locator('#activity-rows tr[data-delivery]').first().getAttribute('data-progress')).toBe('delivered');
    await shot(page, '05-webhooks-last-test-delivered');
    // The copied secret verifies what the receiver got.
    const [testRequest] = await receiver.waitFor(1);
    const verified = verifyWebhook<{ type: string; data: { environment: string } }>({ rawBody: testRequest!.body, headers: testRequest!.headers, secrets: secret });
    expect(verified.event.type).toBe('webhook.test');
    expect(verified.event.data.environment).toBe('test');

    // ---- the receiver fails (with a hostile body): attempts appear, then retry once fixed ----
    receiver.handle(answer(503, HOSTILE, { 'content-type': 'text/html' }));
    const order = await t.orders.POST('/v2/orders', { body: { merchantReference: 'cart-7781', amountMinor: 4999 } });
    expect(order.response.status).toBe(201);
    const orderId = order.data!.orderId;
    await page.goto(`${server.portalUrl}/portal/webhooks`);
    const orderRow = page.locator('#activity-rows tr', { hasText: 'order.created' });
    await orderRow.locator('a.event-type').click();
    await reloadUntil(page, async () => (await page.locator('#delivery-state').getAttribute('data-progress')) === 'failed');
    expect(await page.locator('#attempt-rows tr').count()).toBe(10);
    expect(await page.locator('#attempt-rows tr').first().textContent()).toContain('HTTP 503');
    // The receiver's body is text on the page, never markup: no dialog, no injected image.
    expect(await page.getByTestId('last-response').locator('pre').textContent()).toBe(HOSTILE);
    expect(await page.locator('img').count()).toBe(0);
    expect(watch.dialogs).toEqual([]);
    await shot(page, '06-delivery-failed');
    const eventId = (await page.getByTestId('event-id').textContent())?.trim() ?? '';
    expect(eventId).toMatch(/^[0-9a-f]{64}$/);

    receiver.handle(answer(200, '{"received":true}', { 'content-type': 'application/json' }));
    await page.getByTestId('retry').click();
    await page.waitForURL('**?retried=1');
    expect(await page.getByTestId('delivery-notice').textContent()).toContain('Retry queued');
    await reloadUntil(page, async () => (await page.locator('#delivery-state').getAttribute('data-progress')) === 'delivered');
    expect(await page.locator('#attempt-rows tr').count()).toBe(11);
    expect(await page.getByTestId('payload').textContent()).toContain(`"orderId": "${orderId}"`);
    await shot(page, '07-delivery-retried');

    // ---- search by event id, and by order reference ------------------------------------------
    await page.goto(`${server.portalUrl}/portal/webhooks`);
    await page.fill('#activity-q', eventId);
    await page.click('form.search button[type=submit]');
    await page.waitForURL('**/portal/webhooks/activity?q=*');
    expect(await page.locator('#activity-rows tr[data-delivery]').count()).toBe(1);
    expect(await page.locator('#activity-rows tr[data-delivery]').getAttribute('data-progress')).toBe('delivered');
    await shot(page, '08-activity-search');
    await page.fill('#activity-q', 'cart-7781');
    await page.click('form.search button[type=submit]');
    expect(await page.locator('#activity-rows tr[data-delivery]').count()).toBe(1);
    await page.fill('#activity-q', eventId.slice(0, 20));
    await page.click('form.search button[type=submit]');
    expect(await page.getByTestId('activity-empty').isVisible()).toBe(true);

    // ---- five newest first, then Load 5 more (in place with the script) -----------------------
    for (let i = 1; i <= 4; i++) {
      const more = await t.orders.POST('/v2/orders', { body: { merchantReference: `cart-78${i}0`, amountMinor: 1000 + i } });
      expect(more.response.status).toBe(201);
    }
    await page.goto(`${server.portalUrl}/portal/webhooks`);
    const rows = page.locator('#activity-rows tr[data-delivery]');
    expect(await rows.count()).toBe(5);
    expect(await rows.first().textContent()).toContain('cart-7840');
    expect(await page.getByTestId('load-more').getAttribute('href')).toMatch(/^\/portal\/webhooks\/activity\?cursor=/);
    await page.getByTestId('load-more').click();
    await expect.poll(() => rows.count()).toBe(6);
    expect(page.url()).toBe(`${server.portalUrl}/portal/webhooks`);
    expect(await rows.last().textContent()).toContain('webhook.test');

    // ---- rotate the secret: re-verification after five minutes -------------------------------
    clock.skew += 6 * 60 * 1000;
    await page.getByTestId('rotate-secret').click();
    expect(await page.getByTestId('confirm-rotate').textContent()).toContain('Pending deliveries of version 1 become disabled');
    expect(await page.getByTestId('confirm-rotate').textContent()).toContain('in flight may still carry a signature made with the previous secret');
    expect(await page.getByTestId('reverify').isVisible()).toBe(true);
    await shot(page, '09-rotate-confirm-reverify');
    await page.fill('#token', 'mt_someone-elses-token');
    await page.getByTestId('confirm').click();
    expect(await page.getByTestId('confirm-error').textContent()).toContain('not your member token');
    await page.fill('#token', t.memberToken);
    await page.getByTestId('confirm').click();
    const rotated = (await page.getByTestId('signing-secret').textContent())?.trim() ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect(await page.getByTestId('secret-reveal').textContent()).toContain('version 2');
    await shot(page, '10-secret-rotated');

    // ---- disable (the re-verification above is fresh, so no token is asked) -------------------
    await page.goto(`${server.portalUrl}/portal/webhooks`);
    expect(await page.content()).not.toContain(rotated);
    await page.getByTestId('disable').click();
    expect(await page.getByTestId('reverify').count()).toBe(0);
    await shot(page, '11-disable-confirm');
    await page.getByTestId('confirm').click();
    await page.waitForURL('**/portal/webhooks?done=disabled');
    expect(await page.getByTestId('no-endpoint').isVisible()).toBe(true);
    expect(await page.getByTestId('disabled-endpoint').count()).toBe(1);
    // Activity stays visible after the endpoint is disabled.
    expect(await page.locator('#activity-rows tr[data-delivery]').count()).toBe(5);
    await shot(page, '12-webhooks-disabled');

    // Nothing on any page broke the Content-Security-Policy.
    expect(watch.consoleErrors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    await context.close();

    // ---- a viewer reads, and cannot manage ---------------------------------------------------
    const viewerMember = await createMember(server.services, { tenantId: t.tenantId, email: 'viewer@merchant.example', role: 'viewer' });
    const viewerContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const { page: vp } = await newPage(viewerContext);
    await signIn(vp, viewerMember.memberToken);
    expect(await vp.getByTestId('read-only-note').textContent()).toContain('viewer');
    expect(await vp.getByTestId('add-webhook').count()).toBe(0);
    expect(await vp.locator('#activity-rows tr[data-delivery]').count()).toBe(5);
    await shot(vp, '13-viewer-read-only');
    await vp.locator('#activity-rows tr[data-delivery] a.event-type').first().click();
    expect(await vp.getByTestId('retry').count()).toBe(0);
    const viewerCsrf = await vp.locator('input[name=_csrf]').first().getAttribute('value');
    const forged = await viewerContext.request.post(`${server.portalUrl}/portal/webhooks/endpoints`, {
      form: { _csrf: viewerCsrf ?? '', url: `${receiver.url}/forged` },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    // The environment switch: live has its own (here empty) configuration and activity.
    await vp.goto(`${server.portalUrl}/portal/webhooks`);
    await Promise.all([vp.waitForURL('**/portal/webhooks'), vp.getByTestId('env-live').click()]);
    expect(await vp.getByTestId('environment').textContent()).toBe('live');
    expect(await vp.getByTestId('activity-empty').isVisible()).toBe(true);
    await shot(vp, '14-viewer-live');
    await viewerContext.close();
  });

  it('is readable at phone width (390 px)', { timeout: 60_000 }, async () => {
    const t = await server.newTenant('Portal Phone Merchant');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const { page, watch } = await newPage(context);
    await signIn(page, t.memberToken);
    await page.getByTestId('add-webhook').click();
    await page.fill('#url', `${receiver.url}/phone`);
    await page.getByTestId('create-endpoint').click();
    await shot(page, '20-phone-secret');
    await page.getByTestId('secret-done').click();
    await page.getByTestId('send-test').click();
    await page.locator('[data-testid=last-test] .badge[data-progress=delivered]').waitFor({ timeout: 15_000 });
    await shot(page, '21-phone-webhooks');
    await page.locator('#activity-rows tr[data-delivery] a.event-type').first().click();
    await shot(page, '22-phone-delivery');
    // Nothing is wider than the screen.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.goto(`${server.portalUrl}/portal/webhooks`);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(watch.consoleErrors).toEqual([]);
    await context.close();
  });
});
