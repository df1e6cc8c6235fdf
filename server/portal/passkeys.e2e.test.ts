// Passkeys in a real browser: headless Chromium (server/testing/chromium.ts) with the DevTools
// WebAuthn virtual authenticator (resident keys, user verification). The portal is opened on
// http://localhost:<port>, the loopback origin that serves as relying party in development (a
// passkey cannot belong to an IP address). Phone-width screenshots go to test-results/passkeys/.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberPasskeys } from '../domain/passkeys.ts';
import { startReceiver, type Receiver } from '../delivery/testing.ts';
import { hashToken } from '../domain/secrets.ts';
import { chromiumExecutable } from '../testing/chromium.ts';
import { CHROMIUM_ARGS, SkewClock, startPortalTestServer, type PortalTestServer } from './testing.ts';

const SHOTS = fileURLToPath(new URL('../../test-results/passkeys/', import.meta.url));


let server: PortalTestServer;
let receiver: Receiver;
let browser: Browser;
let base: string;
const clock = new SkewClock();

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  server = await startPortalTestServer({ clock });
  base = server.portalUrl.replace('127.0.0.1', 'localhost');
  receiver = await startReceiver();
  browser = await chromium.launch({ executablePath: await chromiumExecutable(), headless: true, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.close();
});

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

describe('portal passkeys in a browser', () => {
  it('adds a passkey, signs in with it alone, confirms a rotation with it after PORTAL_REVERIFY_AFTER, removes it (ending its session)', { timeout: 120_000 }, async () => {
    const t = await server.newTenant('Passkey Merchant');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const cspErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });

    // ---- sign in with the token, add an endpoint ------------------------------------------
    await page.goto(`${base}/portal/sign-in`);
    await shot(page, '01-sign-in');
    await page.fill('#token', t.memberToken);
    await Promise.all([page.waitForURL('**/portal/webhooks'), page.getByTestId('sign-in-token').click()]);
    await page.getByTestId('add-webhook').click();
    await page.fill('#url', `${receiver.url}/hooks`);
    await page.getByTestId('create-endpoint').click();
    const secret = (await page.getByTestId('signing-secret').textContent())?.trim() ?? '';

    // ---- add a passkey (the sign-in is fresh: no proof asked) -------------------------------
    await page.getByTestId('account-passkeys').click();
    await page.waitForURL('**/portal/account/passkeys');
    expect(await page.getByTestId('no-passkeys').isVisible()).toBe(true);
    await shot(page, '02-passkeys-empty');
    await page.fill('#passkey-name', 'Virtual phone');
    await page.getByTestId('add-passkey').click();
    await page.getByTestId('create-passkey-page').waitFor();
    await shot(page, '03-create-passkey');
    await Promise.all([page.waitForURL('**/portal/account/passkeys?done=added'), page.getByTestId('create-passkey').click()]);
    expect(await page.getByTestId('passkey-name').textContent()).toBe('Virtual phone');
    expect(await page.getByTestId('passkey-last-used').textContent()).toBe('Never');
    await shot(page, '04-passkeys-one');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.isResidentCredential).toBe(true);

    // ---- sign out, sign in with the passkey alone -------------------------------------------
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/portal/sign-in?signed-out=1');
    await Promise.all([page.waitForURL('**/portal/webhooks'), page.getByTestId('sign-in-passkey').click()]);
    expect(await page.getByTestId('environment').textContent()).toBe('test');

    // ---- the sign-in ages past PORTAL_REVERIFY_AFTER: rotating asks for the passkey or the token --
    clock.skew += 6 * 60_000;
    await page.getByTestId('rotate-secret').click();
    expect(await page.getByTestId('reverify-passkey').isVisible()).toBe(true);
    expect(await page.getByTestId('reverify').isVisible()).toBe(true);
    await shot(page, '05-rotate-confirm-passkey');
    await page.getByTestId('confirm-passkey').click();
    await page.getByTestId('signing-secret').waitFor();
    const rotated = (await page.getByTestId('signing-secret').textContent())?.trim() ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await shot(page, '06-secret-rotated');

    // ---- remove the passkey (the passkey proof above is fresh): the session it started ends ----
    await page.goto(`${base}/portal/account/passkeys`);
    expect(await page.getByTestId('passkey-last-used').textContent()).not.toBe('Never');
    await Promise.all([page.waitForURL('**/portal/sign-in?passkey-removed=1'), page.getByTestId('remove-passkey').click()]);
    await shot(page, '07-passkey-removed-signed-out');
    expect(await page.getByTestId('sign-in-notice').textContent()).toContain('The passkey you signed in with was removed');
    await page.fill('#token', t.memberToken);
    await Promise.all([page.waitForURL('**/portal/webhooks'), page.getByTestId('sign-in-token').click()]);
    await page.goto(`${base}/portal/account/passkeys`);
    expect(await page.getByTestId('no-passkeys').isVisible()).toBe(true);
    const member = await server.services.store.read((tx) => tx.tenants.getMemberByTokenHash(hashToken(t.memberToken)));
    expect(await memberPasskeys(server.services, member?.id ?? '')).toEqual([]);
    expect(cspErrors).toEqual([]);
    await context.close();
  });
});
