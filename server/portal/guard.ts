// The checks in front of portal routes: a live session of an active member (re-read from the
// store on every request), the CSRF token on every POST, and the manage role on every change.
// Hiding a button is never the check: a viewer who posts a form directly gets 403 here.
import type { Context, MiddlewareHandler } from 'hono';
import type { Services } from '../domain/context.ts';
import type { PortalEnv } from './env.ts';
import { messageResponse } from './messages.tsx';
import { formFields } from './render.ts';
import { csrfMatches, endSession, readSession, resolveViewer } from './session.ts';

const isApi = (c: Context): boolean => c.req.path.startsWith('/portal/api/');

/** Requires a signed-in, still active member; checks the CSRF token of every POST. */
export function requireViewer(services: Services): MiddlewareHandler<PortalEnv> {
  return async (c, next) => {
    const session = readSession(c, services);
    const viewer = session ? await resolveViewer(services, session) : null;
    if (!viewer) {
      // A cookie that no longer names an active member (or has expired) is dropped.
      if (session) endSession(c);
      if (isApi(c)) return c.json({ error: 'signed_out', detail: 'Sign in to the portal again.' }, 401);
      if (c.req.method === 'GET' || c.req.method === 'HEAD') return c.redirect('/portal/sign-in?ended=1', 303);
      return messageResponse(
        c,
        undefined,
        {
          heading: 'You are signed out',
          detail: 'Your session ended or your membership is no longer active. Nothing was changed. Sign in again to continue.',
          back: { href: '/portal/sign-in', label: 'Sign in' },
        },
        401,
      );
    }
    c.set('viewer', viewer);
    if (c.req.method === 'POST' && !csrfMatches((await formFields(c))._csrf, viewer.session.csrf)) {
      return messageResponse(
        c,
        viewer,
        {
          tone: 'error',
          heading: 'Request refused',
          detail: 'This form did not carry a valid security token (CSRF), so nothing was changed. Reload the page and try again.',
        },
        403,
      );
    }
    await next();
  };
}

/** Only active administrators and developers change webhooks. Runs after requireViewer. */
export const requireManage: MiddlewareHandler<PortalEnv> = async (c, next) => {
  const viewer = c.var.viewer;
  if (!viewer.canManage) {
    return messageResponse(
      c,
      viewer,
      {
        tone: 'error',
        heading: 'Not allowed',
        detail: `A ${viewer.role} can read webhook activity but cannot change webhooks. Only active administrators and developers can.`,
      },
      403,
    );
  }
  await next();
};
