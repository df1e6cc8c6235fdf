// The portal session: a cookie holding a payload sealed with the secrets box (AES-256-GCM), so
// it can be neither read nor forged by the browser. It names the member (id and token hash),
// the tenant, the environment the member is working in, a CSRF token, how the sign-in was proven
// (the passkey's credential id, or null for the member token), the member's session epoch, when
// the member last proved presence (signedInAt) and when the session ends. Every request re-reads
// the member (and the passkey it was proven with): deactivating the member, bumping their epoch
// (`admin member sessions end`) or removing that passkey ends the session at once.
// Over HTTPS the cookies are `__Host-` prefixed (Secure, Path=/, no Domain), so no sibling host
// under a shared parent domain can set one; which scheme that is comes from PORTAL_ORIGIN, else
// the request or a trusted proxy (isHttps).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Scope, Services } from '../domain/context.ts';
import type { EnvironmentName, MemberRecord, MemberRole } from '../domain/model.ts';
import { forwardedProto, isTrustedPeer, peerOf } from './client-address.ts';
import type { PortalSettings } from './settings.ts';

/** The portal's settings of a request (mount.ts sets them on every one; env.ts, which types them, imports Viewer from here). */
const settingsOf = (c: Context): PortalSettings => (c.get('portal') as { settings: PortalSettings }).settings;

export const SESSION_COOKIE = 'portal_session';
/** Pre-session CSRF token of the sign-in form (login CSRF), and the binding of a passkey sign-in's challenge. */
export const SIGN_IN_COOKIE = 'portal_sign_in';
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
const COOKIE_PATH = '/portal';

export interface PortalSession {
  v: 2;
  memberId: string;
  tokenHash: string;
  tenantId: string;
  environment: EnvironmentName;
  csrf: string;
  /** The credential id of the passkey the sign-in was proven with; null: the member token. */
  passkey: string | null;
  /** The member's session epoch at sign-in: a later one ends this session. */
  epoch: number;
  signedInAt: number;
  expiresAt: number;
}

/** Who is looking at the portal, re-checked against the store on this request. */
export interface Viewer {
  session: PortalSession;
  memberId: string;
  email: string;
  role: MemberRole;
  scope: Scope;
  /** Active administrators and developers manage webhooks; viewers only read. */
  canManage: boolean;
}

export const newCsrfToken = (): string => randomBytes(32).toString('base64url');

/** Constant-time comparison of a submitted CSRF token with the expected one. */
export function csrfMatches(submitted: string | undefined, expected: string): boolean {
  if (!submitted) return false;
  const a = Buffer.from(submitted, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether the browser reached the portal over https: PORTAL_ORIGIN's scheme when it is set, else
 * the request's own, or what a proxy TRUST_PROXY trusts says (anyone else's header is the client's word).
 */
export function isHttps(c: Context): boolean {
  const { origin, trustProxy } = settingsOf(c);
  if (origin !== null) return new URL(origin).protocol === 'https:';
  if (new URL(c.req.url).protocol === 'https:') return true;
  if (!isTrustedPeer(peerOf(c), trustProxy)) return false;
  return forwardedProto({ forwarded: c.req.header('forwarded'), xForwardedProto: c.req.header('x-forwarded-proto') }, trustProxy) === 'https';
}

/** `__Host-name` on Path=/ over https; the bare name under /portal on plain http (loopback development). */
function cookieOptions(c: Context, maxAgeSeconds?: number) {
  const base = { httpOnly: true, sameSite: 'Strict' as const, ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }) };
  return isHttps(c) ? { ...base, path: '/', secure: true, prefix: 'host' as const } : { ...base, path: COOKIE_PATH, secure: false };
}

const readCookie = (c: Context, name: string): string | undefined => (isHttps(c) ? getCookie(c, name, 'host') : getCookie(c, name));

export function startSession(
  c: Context,
  services: Services,
  input: { member: Pick<MemberRecord, 'id' | 'tokenHash' | 'tenantId' | 'sessionEpoch'>; environment: EnvironmentName; passkey: string | null },
): PortalSession {
  const now = services.clock.now();
  const session: PortalSession = {
    v: 2,
    memberId: input.member.id,
    tokenHash: input.member.tokenHash,
    tenantId: input.member.tenantId,
    environment: input.environment,
    csrf: newCsrfToken(),
    passkey: input.passkey,
    epoch: input.member.sessionEpoch,
    signedInAt: now,
    expiresAt: now + SESSION_TTL_MS,
  };
  writeSession(c, services, session);
  return session;
}

/** Stores a changed session (environment switch, re-verification) under the same expiry. */
export function writeSession(c: Context, services: Services, session: PortalSession): void {
  const remaining = Math.max(1, Math.floor((session.expiresAt - services.clock.now()) / 1000));
  setCookie(c, SESSION_COOKIE, services.secrets.seal(JSON.stringify(session)), cookieOptions(c, remaining));
}

export function endSession(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, cookieOptions(c));
}

function isSession(x: unknown): x is PortalSession {
  if (typeof x !== 'object' || x === null) return false;
  const s = x as Record<string, unknown>;
  return (
    s.v === 2 &&
    typeof s.memberId === 'string' &&
    typeof s.tokenHash === 'string' &&
    typeof s.tenantId === 'string' &&
    (s.environment === 'test' || s.environment === 'live') &&
    typeof s.csrf === 'string' &&
    (s.passkey === null || typeof s.passkey === 'string') &&
    typeof s.epoch === 'number' &&
    typeof s.signedInAt === 'number' &&
    typeof s.expiresAt === 'number'
  );
}

/** The unexpired session of the cookie, or null (no cookie, tampered, another key, expired). */
export function readSession(c: Context, services: Services): PortalSession | null {
  const sealed = readCookie(c, SESSION_COOKIE);
  if (!sealed) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(services.secrets.open(sealed));
  } catch {
    return null;
  }
  if (!isSession(parsed) || parsed.expiresAt <= services.clock.now()) return null;
  return parsed;
}

/**
 * The session's member, still active, still in the session's tenant and epoch, and (for a
 * passkey sign-in) still holding that passkey, with the scope to act in.
 */
export async function resolveViewer(services: Services, session: PortalSession): Promise<Viewer | null> {
  const found = await services.store.read(async (tx) => {
    const member = await tx.tenants.getMemberByTokenHash(session.tokenHash);
    const env = member ? await tx.tenants.findEnvironment(member.tenantId, session.environment) : null;
    const passkey = member && session.passkey !== null ? await tx.passkeys.getByCredentialId(session.passkey) : null;
    return { member, env, passkey };
  });
  const { member, env, passkey } = found;
  if (!member || !env || !member.active || member.id !== session.memberId || member.tenantId !== session.tenantId) return null;
  if (member.sessionEpoch !== session.epoch) return null;
  if (session.passkey !== null && passkey?.memberId !== member.id) return null;
  return {
    session,
    memberId: member.id,
    email: member.email,
    role: member.role,
    scope: { tenantId: member.tenantId, environmentId: env.id, environment: env.name },
    canManage: member.role === 'administrator' || member.role === 'developer',
  };
}

/** Whether the last proof (sign-in or re-verification) is recent enough for a sensitive change (PORTAL_REVERIFY_AFTER). */
export function isFresh(services: Services, session: PortalSession, reverifyAfterMs: number): boolean {
  return services.clock.now() - session.signedInAt <= reverifyAfterMs;
}

// ---- sign-in form CSRF (no session exists yet) ------------------------------------------

export function issueSignInToken(c: Context): string {
  const token = newCsrfToken();
  setCookie(c, SIGN_IN_COOKIE, token, cookieOptions(c, 60 * 60));
  return token;
}

/** The sign-in form's pre-session token of this browser, if any. */
export const signInToken = (c: Context): string | undefined => readCookie(c, SIGN_IN_COOKIE);

export function signInTokenMatches(c: Context, submitted: string | undefined): boolean {
  const expected = signInToken(c);
  return expected !== undefined && csrfMatches(submitted, expected);
}

/** Drops the sign-in form's token once a session exists. */
export function clearSignInToken(c: Context): void {
  deleteCookie(c, SIGN_IN_COOKIE, cookieOptions(c));
}
