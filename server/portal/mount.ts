// The developer portal: server-rendered pages under /portal on the API's own port, one
// stylesheet and one small script. Pages call the webhook domain functions directly (the same
// ones the management API uses), scoped to the session's tenant environment.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Services } from '../domain/context.ts';
import { isAppError } from '../domain/errors.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { PortalDeps, PortalEnv } from './env.ts';
import { messageResponse } from './messages.tsx';
import { PasskeyFlows } from './passkeys/flows.ts';
import { checkProofGates } from './proof.tsx';
import { registerPasskeyRoutes } from './routes/passkeys.tsx';
import { DEFAULT_PORTAL_SETTINGS, type PortalSettings } from './settings.ts';
import { registerDeliveryRoutes } from './routes/deliveries.tsx';
import { registerEndpointRoutes } from './routes/endpoints.tsx';
import { registerSessionRoutes } from './routes/session.tsx';
import { registerWebhooksPage } from './routes/webhooks.tsx';

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const asset = (name: string): string => readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');

/** The browser half of @simplewebauthn, served from the portal's own origin (the CSP allows no other script). */
const webauthnBundle = (): string => {
  // The package's exports name only its modules; the bundle sits beside them (dist/bundle/).
  const main = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return readFileSync(new URL('../dist/bundle/index.umd.min.js', pathToFileURL(main)), 'utf8');
};

export function mountPortal(app: Hono<AppEnv>, services: Services, settings: PortalSettings = DEFAULT_PORTAL_SETTINGS): void {
  app.route('/portal', portalApp(services, settings));
}

/** The portal's routes, served under /portal; throws when its proof gates disagree with PROOF_GATED_ROUTES. */
export function portalApp(services: Services, settings: PortalSettings = DEFAULT_PORTAL_SETTINGS): Hono<PortalEnv> {
  const portal = new Hono<PortalEnv>();
  const css = asset('portal.css');
  const js = asset('portal.js');
  const webauthn = webauthnBundle();
  const deps: PortalDeps = { settings, passkeys: new PasskeyFlows(services) };

  portal.use('*', async (c, next) => {
    c.set('portal', deps);
    await next();
  });

  portal.use('*', async (c, next) => {
    await next();
    c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Frame-Options', 'DENY');
    c.header('Cross-Origin-Opener-Policy', 'same-origin');
    // Pages carry tenant data (and once, a secret): never cached, never restored from history.
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  });
  portal.post('*', bodyLimit({ maxSize: 16 * 1024, onError: (c) => c.text('The form is too large.', 413) }));

  portal.get('/assets/portal.css', (c) => c.body(css, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=300' }));
  portal.get('/assets/webauthn.js', (c) => c.body(webauthn, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=300' }));
  portal.get('/assets/portal.js', (c) => c.body(js, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=300' }));

  registerSessionRoutes(portal, services);
  registerWebhooksPage(portal, services);
  registerEndpointRoutes(portal, services);
  registerDeliveryRoutes(portal, services);
  registerPasskeyRoutes(portal, services);
  checkProofGates(portal.routes);

  portal.all('*', (c) => messageResponse(c, c.var.viewer, { heading: 'Page not found', detail: 'There is no portal page at this address.' }, 404));

  portal.onError((err, c) => {
    const requestId = c.get('requestId');
    const viewer = c.var.viewer;
    if (isAppError(err) && err.status < 500) {
      const status = err.status === 404 ? 404 : err.status === 403 ? 403 : err.status === 409 ? 409 : 400;
      return messageResponse(c, viewer, { heading: err.title, detail: err.detail }, status);
    }
    services.log.error({ requestId, err: isAppError(err) ? { message: err.message } : err }, 'portal request failed');
    return messageResponse(
      c,
      viewer,
      {
        tone: 'error',
        heading: 'Something went wrong',
        detail: 'The portal could not complete this request. Nothing was shown that should not be; quote the request id to support.',
        requestId,
      },
      500,
    );
  });

  return portal;
}
