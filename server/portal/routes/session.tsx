// Signing in and out, and switching between the test and live environments. The environment
// lives in the sealed session, never in a query parameter, so no link can point a member at
// another tenant's data: the tenant always comes from the member record.
import type { Hono } from 'hono';
import { authenticateMember } from '../../domain/auth.ts';
import type { Services } from '../../domain/context.ts';
import { isAppError } from '../../domain/errors.ts';
import { hashToken } from '../../domain/secrets.ts';
import type { EnvironmentName } from '../../domain/model.ts';
import type { PortalEnv } from '../env.ts';
import { requireViewer } from '../guard.ts';
import { formFields, page } from '../render.ts';
import { clearSignInToken, endSession, issueSignInToken, readSession, resolveViewer, signInTokenMatches, startSession, writeSession } from '../session.ts';
import { SignInPage } from '../views/sign-in.tsx';

const environmentOf = (value: string | undefined): EnvironmentName | null => (value === 'test' || value === 'live' ? value : null);

export function registerSessionRoutes(portal: Hono<PortalEnv>, services: Services): void {
  portal.get('/', async (c) => {
    const session = readSession(c, services);
    const viewer = session ? await resolveViewer(services, session) : null;
    return c.redirect(viewer ? '/portal/webhooks' : '/portal/sign-in', 303);
  });

  portal.get('/sign-in', async (c) => {
    const session = readSession(c, services);
    if (session && (await resolveViewer(services, session))) return c.redirect('/portal/webhooks', 303);
    const notice = c.req.query('ended')
      ? 'Your session ended. Sign in again to continue.'
      : c.req.query('passkey-removed')
        ? 'The passkey you signed in with was removed, so that session ended. Sign in again to continue.'
        : c.req.query('signed-out')
          ? 'You are signed out.'
          : undefined;
    return page(c, <SignInPage csrf={issueSignInToken(c)} notice={notice} />);
  });

  portal.post('/sign-in', async (c) => {
    const fields = await formFields(c);
    if (!signInTokenMatches(c, fields._csrf)) {
      const error = { title: 'Please try again', detail: 'The sign-in form expired or was not sent from this page. Nothing was changed.' };
      return page(c, <SignInPage csrf={issueSignInToken(c)} error={error} />, 403);
    }
    const environment = environmentOf(fields.environment) ?? 'test';
    const token = fields.token?.trim() ?? '';
    try {
      const principal = await authenticateMember(services, token || undefined, environment);
      if (principal.kind !== 'member') throw new Error('authenticateMember answered a non-member principal');
      const member = await services.store.read((tx) => tx.tenants.getMemberByTokenHash(hashToken(token)));
      if (!member || member.id !== principal.memberId) throw new Error('the authenticated member is not in the store');
      startSession(c, services, { member, environment, passkey: null });
      clearSignInToken(c);
      return c.redirect('/portal/webhooks', 303);
    } catch (e) {
      if (!isAppError(e)) throw e;
      // An inactive member learns why; any other failure gets one generic answer.
      const error =
        e.slug === 'permission-denied'
          ? { title: 'Membership inactive', detail: 'This member is inactive and cannot sign in. Ask an administrator of your workspace to reactivate you.' }
          : { title: 'Sign-in failed', detail: 'That member token was not recognised. Check it and try again.' };
      return page(c, <SignInPage csrf={issueSignInToken(c)} error={error} />, e.slug === 'permission-denied' ? 403 : 401);
    }
  });

  portal.post('/sign-out', requireViewer(services), (c) => {
    endSession(c);
    return c.redirect('/portal/sign-in?signed-out=1', 303);
  });

  portal.post('/environment', requireViewer(services), async (c) => {
    const viewer = c.var.viewer;
    const environment = environmentOf((await formFields(c)).environment);
    if (environment && environment !== viewer.session.environment) writeSession(c, services, { ...viewer.session, environment });
    return c.redirect('/portal/webhooks', 303);
  });
}
