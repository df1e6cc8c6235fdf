// Re-verification, written once: every route of PROOF_GATED_ROUTES (proof-gated.ts) runs behind
// proofGate, which lets the change through when the session's last proof of presence is no older
// than PORTAL_REVERIFY_AFTER, or when the form carries a new proof (a passkey assertion or the
// member token, which then refreshes the session). Otherwise it answers the "Confirm it is you"
// page, offering the member token and, when the member has one and this origin can use it, the
// passkey; the asked change's fields ride along, so it goes through once the proof is accepted.
import type { Context, MiddlewareHandler } from 'hono';
import { authenticateMember } from '../domain/auth.ts';
import { isAppError } from '../domain/errors.ts';
import type { Services } from '../domain/context.ts';
import { memberPasskeys } from '../domain/passkeys.ts';
import { clientAddressOf, peerOf } from './client-address.ts';
import type { PortalEnv } from './env.ts';
import { chromeFor, messageResponse } from './messages.tsx';
import { ProofRefused, type Attempt } from './passkeys/flows.ts';
import { relyingPartyOf } from './passkeys/relying-party.ts';
import { gatedRoute } from './proof-gated.ts';
import { formFields, page } from './render.ts';
import { isFresh, writeSession } from './session.ts';
import { ReverifyPage } from './views/proof.tsx';

type PortalContext = Context<PortalEnv>;

/** Fields that are the proof itself, never carried into the confirmation form. */
const PROOF_FIELDS = new Set(['_csrf', 'token', 'credential']);

/** The client's address: the TCP peer, or a forwarded address when TRUST_PROXY trusts the proxies in between. */
export const clientAddress = (c: PortalContext): string =>
  clientAddressOf(peerOf(c), { forwarded: c.req.header('forwarded'), xForwardedFor: c.req.header('x-forwarded-for') }, c.var.portal.settings.trustProxy);

/** The ceremony's relying party and binding for a signed-in member, or why passkeys cannot be used here. */
export function sessionAttempt(c: PortalContext): Attempt | { refused: string } {
  const rp = relyingPartyOf(c, c.var.portal.settings);
  if (!rp.ok) return { refused: rp.reason };
  return { rp: rp.rp, binding: c.var.viewer.session.csrf, address: clientAddress(c) };
}

/** Whether the proof page offers the passkey too: the member has one and this origin can use it. */
export async function passkeyOffered(c: PortalContext, services: Services): Promise<boolean> {
  return relyingPartyOf(c, c.var.portal.settings).ok && (await memberPasskeys(services, c.var.viewer.memberId)).length > 0;
}

/** The session's last proof is recent enough for a sensitive change. */
export const proofIsFresh = (c: PortalContext, services: Services): boolean => isFresh(services, c.var.viewer.session, c.var.portal.settings.reverifyAfterMs);

/**
 * The gate of a sensitive change (`path` as registered, listed in PROOF_GATED_ROUTES). Runs after
 * requireViewer (and requireManage), so a viewer is refused before being asked for a proof.
 */
export function proofGate(services: Services, path: string): MiddlewareHandler<PortalEnv> {
  const route = gatedRoute(path);
  return async (c, next) => {
    if (proofIsFresh(c, services)) return next();
    if (route.asks === 'refuse') return staleStep(c);
    const fields = await formFields(c);
    let error: string | undefined;
    let retryAfter = 0;
    if (!fields.credential && fields.token !== undefined && fields.token.trim() === '') {
      // An empty token field is no proof (and no failure): the member pressed the button too soon.
      error = 'Enter your member token, or confirm with your passkey. Nothing was changed.';
    } else if (fields.credential || fields.token !== undefined) {
      try {
        if (fields.credential) await provenByPasskey(c, fields.credential);
        else await provenByToken(c, services, fields.token ?? '');
        refreshProof(c, services);
        return next();
      } catch (e) {
        if (!(e instanceof ProofRefused)) throw e;
        ({ message: error, retryAfter } = e);
      }
    }
    const viewer = c.var.viewer;
    if (retryAfter > 0) c.header('Retry-After', String(retryAfter));
    return page(
      c,
      <ReverifyPage
        chrome={chromeFor(viewer, 'Confirm it is you')}
        csrf={viewer.session.csrf}
        action={{ href: c.req.path, label: route.change }}
        fields={Object.entries(fields).filter(([name]) => !PROOF_FIELDS.has(name))}
        passkey={await passkeyOffered(c, services)}
        reverifyAfterMs={c.var.portal.settings.reverifyAfterMs}
        error={error}
      />,
      retryAfter > 0 ? 429 : 403,
    );
  };
}

/** A later step of a flow whose first step took the proof: stale now, it starts over. */
function staleStep(c: PortalContext): Response | Promise<Response> {
  const detail = 'Your last proof is too old: go back to Passkeys and add the passkey again (you will be asked to confirm it is you). Nothing was changed.';
  if (c.req.path.startsWith('/portal/api/')) return c.json({ error: 'refused', detail }, 403);
  return messageResponse(c, c.var.viewer, { tone: 'error', heading: 'Confirm it is you first', detail, back: { href: '/portal/account/passkeys', label: 'Passkeys' } }, 403);
}

function refreshProof(c: PortalContext, services: Services): void {
  const viewer = c.var.viewer;
  const session = { ...viewer.session, signedInAt: services.clock.now() };
  writeSession(c, services, session);
  c.set('viewer', { ...viewer, session });
}

async function provenByPasskey(c: PortalContext, credential: string): Promise<void> {
  const attempt = sessionAttempt(c);
  if ('refused' in attempt) throw new ProofRefused(attempt.refused);
  await c.var.portal.passkeys.assertionFinish(attempt, 'reverify', credential, c.var.viewer.memberId);
}

/** The member token typed again; failures count against the member only (a shared address locks nobody out). */
async function provenByToken(c: PortalContext, services: Services, token: string): Promise<void> {
  const { viewer, portal } = c.var;
  const keys = [{ kind: 'member' as const, id: viewer.memberId }];
  portal.passkeys.refuseWhenLimited(keys);
  try {
    const principal = await authenticateMember(services, token.trim() || undefined, viewer.scope.environment);
    if (principal.kind === 'member' && principal.memberId === viewer.memberId) return;
  } catch (e) {
    if (!isAppError(e)) throw e;
  }
  portal.passkeys.failures.fail(keys);
  throw new ProofRefused('That is not your member token. Nothing was changed.');
}
