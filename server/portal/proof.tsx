// Re-verification: a sensitive change (rotating a secret, disabling an endpoint, changing its
// signature scheme, adding or removing a passkey) needs a proof of presence no older than
// PORTAL_REVERIFY_AFTER. A member with a passkey gives a fresh assertion; one without types the
// member token again. The asked change's fields ride along in the confirmation form, so it goes
// through once the proof is accepted, without the member filling anything in again.
import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { authenticateMember } from '../domain/auth.ts';
import { isAppError } from '../domain/errors.ts';
import type { Services } from '../domain/context.ts';
import { memberPasskeys } from '../domain/passkeys.ts';
import type { PortalEnv } from './env.ts';
import { chromeFor } from './messages.tsx';
import { ProofRefused, type Attempt } from './passkeys/flows.ts';
import { relyingPartyOf } from './passkeys/relying-party.ts';
import { page } from './render.ts';
import { isFresh, writeSession } from './session.ts';
import { ReverifyPage, type ProofMethod } from './views/proof.tsx';

type PortalContext = Context<PortalEnv>;

/** Fields that are the proof itself, never carried into the confirmation form. */
const PROOF_FIELDS = new Set(['_csrf', 'token', 'credential']);

export const clientAddress = (c: Context): string => {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
};

/** The ceremony's relying party and binding for a signed-in member, or why passkeys cannot be used here. */
export function sessionAttempt(c: PortalContext): Attempt | { refused: string } {
  const rp = relyingPartyOf(c, c.var.portal.settings);
  if (!rp.ok) return { refused: rp.reason };
  return { rp: rp.rp, binding: c.var.viewer.session.csrf, address: clientAddress(c) };
}

/** How this member proves presence: a passkey when they have one and this origin can use it. */
export async function proofMethod(c: PortalContext, services: Services): Promise<ProofMethod> {
  const usable = relyingPartyOf(c, c.var.portal.settings).ok;
  return usable && (await memberPasskeys(services, c.var.viewer.memberId)).length > 0 ? 'passkey' : 'token';
}

export type ProofCheck = { fresh: true } | { fresh: false; method: ProofMethod; error?: string };

/**
 * Whether the change may go ahead: the session's proof is fresh, or this form carries a new one
 * (which then refreshes the session). Otherwise the method to ask with, and why the proof given
 * (if any) was refused.
 */
export async function checkProof(c: PortalContext, services: Services, fields: Record<string, string>): Promise<ProofCheck> {
  const viewer = c.var.viewer;
  if (isFresh(services, viewer.session, c.var.portal.settings.reverifyAfterMs)) return { fresh: true };
  const method = await proofMethod(c, services);
  if (fields.credential === undefined && fields.token === undefined) return { fresh: false, method };
  try {
    if (fields.credential !== undefined) await provenByPasskey(c, fields.credential);
    else await provenByToken(c, services, fields.token ?? '');
  } catch (e) {
    if (e instanceof ProofRefused) return { fresh: false, method, error: e.message };
    throw e;
  }
  const session = { ...viewer.session, signedInAt: services.clock.now() };
  writeSession(c, services, session);
  c.set('viewer', { ...viewer, session });
  return { fresh: true };
}

async function provenByPasskey(c: PortalContext, credential: string): Promise<void> {
  const attempt = sessionAttempt(c);
  if ('refused' in attempt) throw new ProofRefused(attempt.refused);
  await c.var.portal.passkeys.assertionFinish(attempt, 'reverify', credential, c.var.viewer.memberId);
}

async function provenByToken(c: PortalContext, services: Services, token: string): Promise<void> {
  const { viewer, portal } = c.var;
  const keys = [
    { kind: 'address' as const, id: clientAddress(c) },
    { kind: 'member' as const, id: viewer.memberId },
  ];
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

/**
 * For routes without a confirmation page of their own: null when the change may go ahead, else
 * the "Confirm it is you" page, which posts the same fields back to `action` with the proof.
 */
export async function requireProof(
  c: PortalContext,
  services: Services,
  fields: Record<string, string>,
  action: { href: string; label: string },
): Promise<Response | null> {
  const proof = await checkProof(c, services, fields);
  if (proof.fresh) return null;
  const viewer = c.var.viewer;
  const carried = Object.entries(fields).filter(([name]) => !PROOF_FIELDS.has(name));
  return page(
    c,
    <ReverifyPage
      chrome={chromeFor(viewer, 'Confirm it is you')}
      csrf={viewer.session.csrf}
      action={action}
      fields={carried}
      method={proof.method}
      reverifyAfterMs={c.var.portal.settings.reverifyAfterMs}
      error={proof.error}
    />,
    proof.error ? 403 : 200,
  );
}
