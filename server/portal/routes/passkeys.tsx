// Passkeys: the member's Passkeys page (add, remove; both need a fresh proof), the JSON options
// the browser's ceremonies start from, and signing in with a passkey alone. The options answer
// JSON to portal.js; the answers come back as ordinary form posts, so each ends in a page.
import type { Context, Hono } from 'hono';
import { deleteCookie, getCookie } from 'hono/cookie';
import type { Services } from '../../domain/context.ts';
import type { EnvironmentName } from '../../domain/model.ts';
import { memberPasskeys, removePasskey } from '../../domain/passkeys.ts';
import type { PortalEnv } from '../env.ts';
import { requireViewer } from '../guard.ts';
import { chromeFor, messageResponse } from '../messages.tsx';
import { PASSKEY_NAME_MAX, ProofRefused, type Attempt } from '../passkeys/flows.ts';
import { relyingPartyOf } from '../passkeys/relying-party.ts';
import { clientAddress, requireProof, sessionAttempt } from '../proof.tsx';
import { formFields, page } from '../render.ts';
import { isFresh, issueSignInToken, SIGN_IN_COOKIE, signInTokenMatches, startSession } from '../session.ts';
import { CreatePasskeyPage, PasskeysPage } from '../views/passkeys.tsx';
import { SignInPage } from '../views/sign-in.tsx';

type PortalContext = Context<PortalEnv>;

/** JSON refusals for portal.js: it shows `detail` beside the button. */
const refusedJson = (c: Context, status: 400 | 403 | 429, detail: string, retryAfter = 0) => {
  if (retryAfter > 0) c.header('Retry-After', String(retryAfter));
  return c.json({ error: 'refused', detail }, status);
};

const passkeyName = (raw: string | undefined): string => (raw ?? '').trim().slice(0, PASSKEY_NAME_MAX);

export function registerPasskeyRoutes(portal: Hono<PortalEnv>, services: Services): void {
  const signedIn = requireViewer(services);

  async function passkeysPage(c: PortalContext, status: 200 | 400 = 200) {
    const viewer = c.var.viewer;
    const attempt = sessionAttempt(c);
    return page(
      c,
      <PasskeysPage
        chrome={chromeFor(viewer, 'Passkeys')}
        csrf={viewer.session.csrf}
        passkeys={await memberPasskeys(services, viewer.memberId)}
        unavailable={'refused' in attempt ? attempt.refused : undefined}
        done={c.req.query('done')}
      />,
      status,
    );
  }

  portal.get('/account/passkeys', signedIn, (c) => passkeysPage(c));

  // Adding: the name first (with the proof), then the page that runs the ceremony.
  portal.post('/account/passkeys/add', signedIn, async (c) => {
    const fields = await formFields(c);
    const name = passkeyName(fields.name);
    if (!name) return passkeysPage(c, 400);
    const ask = await requireProof(c, services, { ...fields, name }, { href: '/portal/account/passkeys/add', label: 'add a passkey' });
    if (ask) return ask;
    return page(c, <CreatePasskeyPage chrome={chromeFor(c.var.viewer, 'Add a passkey')} csrf={c.var.viewer.session.csrf} name={name} />);
  });

  portal.post('/api/passkeys/registration-options', signedIn, async (c) => {
    const viewer = c.var.viewer;
    const attempt = sessionAttempt(c);
    if ('refused' in attempt) return refusedJson(c, 400, attempt.refused);
    if (!isFresh(services, viewer.session, c.var.portal.settings.reverifyAfterMs)) {
      return refusedJson(c, 403, 'Confirm it is you first: go back to Passkeys and add the passkey again.');
    }
    return c.json(await c.var.portal.passkeys.registrationStart(attempt, { id: viewer.memberId, email: viewer.email }));
  });

  portal.post('/account/passkeys', signedIn, async (c) => {
    const viewer = c.var.viewer;
    const fields = await formFields(c);
    const name = passkeyName(fields.name);
    const attempt = sessionAttempt(c);
    const retry = (error: string, status: 400 | 403 | 429) =>
      page(c, <CreatePasskeyPage chrome={chromeFor(viewer, 'Add a passkey')} csrf={viewer.session.csrf} name={name} error={error} />, status);
    if ('refused' in attempt) return retry(attempt.refused, 400);
    if (!name) return retry('The passkey needs a name.', 400);
    try {
      await c.var.portal.passkeys.registrationFinish(attempt, { id: viewer.memberId, tenantId: viewer.scope.tenantId }, name, fields.credential);
    } catch (e) {
      if (e instanceof ProofRefused) return retry(e.message, e.retryAfter > 0 ? 429 : 403);
      throw e;
    }
    return c.redirect('/portal/account/passkeys?done=added', 303);
  });

  portal.post('/account/passkeys/:passkeyId/remove', signedIn, async (c) => {
    const viewer = c.var.viewer;
    const passkeyId = c.req.param('passkeyId');
    const fields = await formFields(c);
    const ask = await requireProof(c, services, fields, { href: `/portal/account/passkeys/${passkeyId}/remove`, label: 'remove a passkey' });
    if (ask) return ask;
    if (!(await removePasskey(services, viewer.memberId, passkeyId))) {
      return messageResponse(c, viewer, { heading: 'No such passkey', detail: 'This passkey is not one of yours, or it was removed already. Nothing was changed.' }, 404);
    }
    services.log.info({ memberId: viewer.memberId, passkeyId }, 'portal passkey removed');
    return c.redirect('/portal/account/passkeys?done=removed', 303);
  });

  portal.post('/api/passkeys/assertion-options', signedIn, async (c) => {
    const attempt = sessionAttempt(c);
    if ('refused' in attempt) return refusedJson(c, 400, attempt.refused);
    return c.json(await c.var.portal.passkeys.reverifyStart(attempt, c.var.viewer.memberId));
  });

  // ---- sign-in with a passkey: bound to the sign-in form's pre-session cookie ----------------

  function signInAttempt(c: PortalContext, submitted: string | undefined): Attempt | { refused: string } {
    if (!signInTokenMatches(c, submitted)) return { refused: 'The sign-in form expired or was not sent from this page. Reload it and try again.' };
    const rp = relyingPartyOf(c, c.var.portal.settings);
    if (!rp.ok) return { refused: rp.reason };
    return { rp: rp.rp, binding: getCookie(c, SIGN_IN_COOKIE) ?? '', address: clientAddress(c) };
  }

  portal.post('/sign-in/passkey/options', async (c) => {
    const attempt = signInAttempt(c, (await formFields(c))._csrf);
    if ('refused' in attempt) return refusedJson(c, 403, attempt.refused);
    return c.json(await c.var.portal.passkeys.signInStart(attempt));
  });

  portal.post('/sign-in/passkey', async (c) => {
    const fields = await formFields(c);
    const environment: EnvironmentName = fields.environment === 'live' ? 'live' : 'test';
    const attempt = signInAttempt(c, fields._csrf);
    const failed = (detail: string, status: 400 | 401 | 403 | 429) =>
      page(c, <SignInPage csrf={issueSignInToken(c)} error={{ title: 'Passkey sign-in failed', detail }} />, status);
    if ('refused' in attempt) return failed(attempt.refused, 403);
    try {
      const member = await c.var.portal.passkeys.assertionFinish(attempt, 'sign-in', fields.credential);
      startSession(c, services, { member, environment });
      deleteCookie(c, SIGN_IN_COOKIE, { path: '/portal' });
      return c.redirect('/portal/webhooks', 303);
    } catch (e) {
      if (e instanceof ProofRefused) return failed(e.message, e.retryAfter > 0 ? 429 : 401);
      throw e;
    }
  });
}
