// Passkeys: the member's Passkeys page (add, remove; both registered by `gated`, behind
// proofGate), the JSON options the browser's ceremonies start from (limited per address), and
// signing in with a passkey alone. The options answer JSON to portal.js; the answers come back as
// ordinary form posts, so each ends in a page.
import type { Context, Hono } from 'hono';
import type { Services } from '../../domain/context.ts';
import type { EnvironmentName } from '../../domain/model.ts';
import { memberPasskeys, removePasskey } from '../../domain/passkeys.ts';
import type { PortalEnv } from '../env.ts';
import { requireViewer } from '../guard.ts';
import { chromeFor, messageResponse } from '../messages.tsx';
import { PASSKEY_NAME_MAX, ProofRefused, type Attempt } from '../passkeys/flows.ts';
import { relyingPartyOf } from '../passkeys/relying-party.ts';
import { clientAddress, gated, sessionAttempt } from '../proof.tsx';
import { formFields, page } from '../render.ts';
import { clearSignInToken, endSession, issueSignInToken, signInToken, signInTokenMatches, startSession } from '../session.ts';
import { CreatePasskeyPage, PasskeysPage } from '../views/passkeys.tsx';
import { SignInPage } from '../views/sign-in.tsx';

type PortalContext = Context<PortalEnv>;

/** JSON refusals for portal.js: it shows `detail` beside the button. */
const refusedJson = (c: Context, status: 400 | 403 | 429, detail: string, retryAfter = 0) => {
  if (retryAfter > 0) c.header('Retry-After', String(retryAfter));
  return c.json({ error: 'refused', detail }, status);
};

/** Ceremony options as JSON, or the refusal (too many from this address, too many ceremonies under way). */
async function options(c: Context, start: () => Promise<object>): Promise<Response> {
  try {
    return c.json(await start());
  } catch (e) {
    if (e instanceof ProofRefused) return refusedJson(c, 429, e.message, e.retryAfter);
    throw e;
  }
}

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
  gated(portal, services, '/account/passkeys/add', async (c) => {
    const name = passkeyName((await formFields(c)).name);
    if (!name) return passkeysPage(c, 400);
    return page(c, <CreatePasskeyPage chrome={chromeFor(c.var.viewer, 'Add a passkey')} csrf={c.var.viewer.session.csrf} name={name} />);
  });

  gated(portal, services, '/api/passkeys/registration-options', async (c) => {
    const viewer = c.var.viewer;
    const attempt = sessionAttempt(c);
    if ('refused' in attempt) return refusedJson(c, 400, attempt.refused);
    return options(c, () => c.var.portal.passkeys.registrationStart(attempt, { id: viewer.memberId, email: viewer.email }));
  });

  gated(portal, services, '/account/passkeys', async (c) => {
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

  gated(portal, services, '/account/passkeys/:passkeyId/remove', async (c) => {
    const viewer = c.var.viewer;
    const passkeyId = c.req.param('passkeyId');
    const passkey = (await memberPasskeys(services, viewer.memberId)).find((p) => p.id === passkeyId);
    if (!passkey || !(await removePasskey(services, viewer.memberId, passkeyId))) {
      return messageResponse(c, viewer, { heading: 'No such passkey', detail: 'This passkey is not one of yours, or it was removed already. Nothing was changed.' }, 404);
    }
    services.log.info({ memberId: viewer.memberId, passkeyId }, 'portal passkey removed');
    // The sessions this passkey started end with it, this one included.
    if (viewer.session.passkey === passkey.credentialId) {
      endSession(c);
      return c.redirect('/portal/sign-in?passkey-removed=1', 303);
    }
    return c.redirect('/portal/account/passkeys?done=removed', 303);
  });

  portal.post('/api/passkeys/assertion-options', signedIn, async (c) => {
    const attempt = sessionAttempt(c);
    if ('refused' in attempt) return refusedJson(c, 400, attempt.refused);
    return options(c, () => c.var.portal.passkeys.reverifyStart(attempt, c.var.viewer.memberId));
  });

  // ---- sign-in with a passkey: bound to the sign-in form's pre-session cookie ----------------

  function signInAttempt(c: PortalContext, submitted: string | undefined): Attempt | { refused: string } {
    if (!signInTokenMatches(c, submitted)) return { refused: 'The sign-in form expired or was not sent from this page. Reload it and try again.' };
    const rp = relyingPartyOf(c, c.var.portal.settings);
    if (!rp.ok) return { refused: rp.reason };
    return { rp: rp.rp, binding: signInToken(c) ?? '', address: clientAddress(c) };
  }

  portal.post('/sign-in/passkey/options', async (c) => {
    const attempt = signInAttempt(c, (await formFields(c))._csrf);
    if ('refused' in attempt) return refusedJson(c, 403, attempt.refused);
    return options(c, () => c.var.portal.passkeys.signInStart(attempt));
  });

  portal.post('/sign-in/passkey', async (c) => {
    const fields = await formFields(c);
    const environment: EnvironmentName = fields.environment === 'live' ? 'live' : 'test';
    const attempt = signInAttempt(c, fields._csrf);
    const failed = (detail: string, status: 400 | 401 | 403 | 429) =>
      page(c, <SignInPage csrf={issueSignInToken(c)} error={{ title: 'Passkey sign-in failed', detail }} />, status);
    if ('refused' in attempt) return failed(attempt.refused, 403);
    try {
      const { member, passkey } = await c.var.portal.passkeys.assertionFinish(attempt, 'sign-in', fields.credential);
      startSession(c, services, { member, environment, passkey: passkey.credentialId });
      clearSignInToken(c);
      return c.redirect('/portal/webhooks', 303);
    } catch (e) {
      if (e instanceof ProofRefused) return failed(e.message, e.retryAfter > 0 ? 429 : 401);
      throw e;
    }
  });
}
