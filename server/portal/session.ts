// The portal session: a cookie holding a payload sealed with the secrets box (AES-256-GCM), so
// it can be neither read nor forged by the browser. It names the member (id and token hash),
// the tenant, the environment the member is working in, a CSRF token, when the member last
// proved they hold the token (signedInAt) and when the session ends. The member is looked up
// again on every request, so deactivating a member ends their sessions at once.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Scope, Services } from '../domain/context.ts';
import type { EnvironmentName, MemberRecord, MemberRole } from '../domain/model.ts';

export const SESSION_COOKIE = 'portal_session';
/** Pre-session CSRF token of the sign-in form (login CSRF). */
export const SIGN_IN_COOKIE = 'portal_sign_in';
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
const COOKIE_PATH = '/portal';

export interface PortalSession {
  v: 1;
  memberId: string;
  tokenHash: string;
  tenantId: string;
  environment: EnvironmentName;
  csrf: string;
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

/** Secure when the request came over https (directly or through a proxy that says so). */
function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
}

function cookieOptions(c: Context, maxAgeSeconds: number) {
  return { path: COOKIE_PATH, httpOnly: true, sameSite: 'Strict' as const, secure: isHttps(c), maxAge: maxAgeSeconds };
}

export function startSession(
  c: Context,
  services: Services,
  input: { member: Pick<MemberRecord, 'id' | 'tokenHash' | 'tenantId'>; environment: EnvironmentName },
): PortalSession {
  const now = services.clock.now();
  const session: PortalSession = {
    v: 1,
    memberId: input.member.id,
    tokenHash: input.member.tokenHash,
    tenantId: input.member.tenantId,
    environment: input.environment,
    csrf: newCsrfToken(),
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
  deleteCookie(c, SESSION_COOKIE, { path: COOKIE_PATH, secure: isHttps(c) });
}

function isSession(x: unknown): x is PortalSession {
  if (typeof x !== 'object' || x === null) return false;
  const s = x as Record<string, unknown>;
  return (
    s.v === 1 &&
    typeof s.memberId === 'string' &&
    typeof s.tokenHash === 'string' &&
    typeof s.tenantId === 'string' &&
    (s.environment === 'test' || s.environment === 'live') &&
    typeof s.csrf === 'string' &&
    typeof s.signedInAt === 'number' &&
    typeof s.expiresAt === 'number'
  );
}

/** The unexpired session of the cookie, or null (no cookie, tampered, another key, expired). */
export function readSession(c: Context, services: Services): PortalSession | null {
  const sealed = getCookie(c, SESSION_COOKIE);
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

/** The session's member, still active and still in the session's tenant, with the scope to act in. */
export async function resolveViewer(services: Services, session: PortalSession): Promise<Viewer | null> {
  const found = await services.store.read(async (tx) => {
    const member = await tx.tenants.getMemberByTokenHash(session.tokenHash);
    const env = member ? await tx.tenants.findEnvironment(member.tenantId, session.environment) : null;
    return { member, env };
  });
  const { member, env } = found;
  if (!member || !env || !member.active || member.id !== session.memberId || member.tenantId !== session.tenantId) return null;
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

export function signInTokenMatches(c: Context, submitted: string | undefined): boolean {
  const expected = getCookie(c, SIGN_IN_COOKIE);
  return expected !== undefined && csrfMatches(submitted, expected);
}
