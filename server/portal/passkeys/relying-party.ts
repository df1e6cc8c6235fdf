// Which relying party a request's ceremony uses: PORTAL_ORIGIN (and its RP ID) when set, else,
// for development, the request's own origin when it is loopback. Anything else is a clear
// refusal naming the setting, never a ceremony that fails later for a reason nobody sees.
import type { Context } from 'hono';
import { isIpAddress, isLoopbackHost, type PortalSettings } from '../settings.ts';

export interface RelyingParty {
  origin: string;
  rpId: string;
}

export type RelyingPartyAnswer = { ok: true; rp: RelyingParty } | { ok: false; reason: string };

export function relyingPartyOf(c: Context, settings: PortalSettings): RelyingPartyAnswer {
  const url = new URL(c.req.url);
  if (settings.origin !== null && settings.rpId !== null) {
    const expected = new URL(settings.origin);
    // A proxy keeps the Host header: a request for another host would fail its origin check later.
    if (url.host !== expected.host) {
      return { ok: false, reason: `Passkeys of this portal belong to ${settings.origin} (PORTAL_ORIGIN), but this page was opened on ${url.host}. Open the portal on ${settings.origin}.` };
    }
    return { ok: true, rp: { origin: settings.origin, rpId: settings.rpId } };
  }
  if (!isLoopbackHost(url.hostname)) {
    return { ok: false, reason: `Passkeys need PORTAL_ORIGIN (the portal's public origin) on a server reached as ${url.host}. Sign in with your member token meanwhile.` };
  }
  if (isIpAddress(url.hostname)) {
    return { ok: false, reason: `A passkey belongs to a domain, not an IP address: open the portal on http://localhost:${url.port || '80'} to use passkeys.` };
  }
  return { ok: true, rp: { origin: url.origin, rpId: url.hostname } };
}
