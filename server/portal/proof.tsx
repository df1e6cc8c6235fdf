// Re-verification, written once: every route of PROOF_GATED_ROUTES (proof-gated.ts) is registered
// from its entry by `gated`, behind its guards and proofGate, which lets the change through when
// the session's last proof of presence is no older than PORTAL_REVERIFY_AFTER, or when the form
// carries a new proof (a passkey assertion or the member token, which then refreshes the
// session). Otherwise it answers the "Confirm it is you" page, offering the member token and,
// when the member has one and this origin can use it, the passkey; the asked change's fields
// ride along, so it goes through once the proof is accepted.
import type { Context, Hono, MiddlewareHandler, Next } from 'hono';
import type { H } from 'hono/types';
import { authenticateMember } from '../domain/auth.ts';
import { isAppError } from '../domain/errors.ts';
import type { Services } from '../domain/context.ts';
import { memberPasskeys } from '../domain/passkeys.ts';
import { clientAddressOf, peerOf } from './client-address.ts';
import type { PortalEnv } from './env.ts';
import { chromeFor, messageResponse } from './messages.tsx';
import { ProofRefused, type Attempt } from './passkeys/flows.ts';
import { relyingPartyOf } from './passkeys/relying-party.ts';
import { gatedRoute, PROOF_GATED_ROUTES, type ProofGatedRoute } from './proof-gated.ts';
import { requireManage, requireViewer } from './guard.ts';
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

/** Every gate made here, so checkProofGates can find them among a portal's routes. */
const GATES = new WeakSet<object>();

/**
 * Registers a route of PROOF_GATED_ROUTES from its entry (`path` as registered under /portal):
 * its method, the guards of its `who` (so a viewer is refused before being asked for a proof),
 * its proof gate, then the handlers. A path the table does not list throws here, at start.
 */
export function gated<P extends string>(portal: Hono<PortalEnv>, services: Services, path: P, ...handlers: H<PortalEnv, P>[]): void {
  const route = gatedRoute(path);
  const chain: [H<PortalEnv, P>, ...H<PortalEnv, P>[]] = [
    requireViewer(services),
    ...(route.who === 'manager' ? [requireManage] : []),
    gateOf(services, route),
    ...handlers,
  ];
  portal.on(route.method, path, ...chain);
}

/** Throws unless the gates among these routes sit on exactly the methods and paths of PROOF_GATED_ROUTES. */
export function checkProofGates(routes: readonly { method: string; path: string; handler: unknown }[]): void {
  const at = new Set(routes.filter((r) => typeof r.handler === 'function' && GATES.has(r.handler)).map((r) => `${r.method} /portal${r.path}`));
  const listed = new Set(PROOF_GATED_ROUTES.map((r) => `${r.method} ${r.path}`));
  const problems = [
    ...[...listed].filter((k) => !at.has(k)).map((k) => `${k} is not registered behind its gate`),
    ...[...at].filter((k) => !listed.has(k)).map((k) => `${k} is gated but not in the table`),
  ];
  if (problems.length > 0) throw new Error(`proof gates disagree with PROOF_GATED_ROUTES (server/portal/proof-gated.ts): ${problems.join('; ')}`);
}

/** What the proof page tells the member: why the proof was refused (none when no proof was given), and how long to wait. */
interface Refusal {
  error?: string;
  retryAfter: number;
}

/** The gate of one route of the table, run after its guards. */
function gateOf(services: Services, route: ProofGatedRoute): MiddlewareHandler<PortalEnv> {
  async function proofGate(c: PortalContext, next: Next): Promise<Response | void> {
    if (proofIsFresh(c, services)) return next();
    if (route.asks === 'refuse') return staleStep(c);
    const fields = await formFields(c);
    const outcome = await takeProof(c, services, fields);
    if (outcome !== 'proven') return askForProof(c, services, route, fields, outcome);
    refreshProof(c, services);
    return next();
  }
  GATES.add(proofGate);
  return proofGate;
}

/** Takes the proof the form carries (a passkey assertion, else the member token): 'proven', or the refusal. */
async function takeProof(c: PortalContext, services: Services, fields: Record<string, string>): Promise<'proven' | Refusal> {
  if (!fields.credential && fields.token !== undefined && fields.token.trim() === '') {
    // An empty token field is no proof (and no failure): the member pressed the button too soon.
    return { error: 'Enter your member token, or confirm with your passkey. Nothing was changed.', retryAfter: 0 };
  }
  if (!fields.credential && fields.token === undefined) return { retryAfter: 0 };
  try {
    if (fields.credential) await provenByPasskey(c, fields.credential);
    else await provenByToken(c, services, fields.token ?? '');
    return 'proven';
  } catch (e) {
    if (!(e instanceof ProofRefused)) throw e;
    return { error: e.message, retryAfter: e.retryAfter };
  }
}

/** The "Confirm it is you" page, carrying the form's fields so the change goes through once proven. */
async function askForProof(c: PortalContext, services: Services, route: ProofGatedRoute, fields: Record<string, string>, refusal: Refusal): Promise<Response> {
  const viewer = c.var.viewer;
  if (refusal.retryAfter > 0) c.header('Retry-After', String(refusal.retryAfter));
  return page(
    c,
    <ReverifyPage
      chrome={chromeFor(viewer, 'Confirm it is you')}
      csrf={viewer.session.csrf}
      action={{ href: c.req.path, label: route.change }}
      fields={Object.entries(fields).filter(([name]) => !PROOF_FIELDS.has(name))}
      passkey={await passkeyOffered(c, services)}
      reverifyAfterMs={c.var.portal.settings.reverifyAfterMs}
      error={refusal.error}
    />,
    refusal.retryAfter > 0 ? 429 : 403,
  );
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
  portal.passkeys.failures.record(keys);
  throw new ProofRefused('That is not your member token. Nothing was changed.');
}
