// The portal's settings (docs/operations.md, "Settings"): the WebAuthn relying party and how
// old a proof of presence may be before a sensitive change asks for a new one. Checked at
// start: an RP ID that cannot serve the origin is a configuration error, not a failed ceremony.
import { parse } from 'tldts';
import { parseDuration } from '../retention/settings.ts';
import { parseTrustProxy, TRUST_PROXY_OFF, type TrustProxy } from './client-address.ts';

export interface PortalSettings {
  /** PORTAL_ORIGIN: the one origin the portal is served on (null: loopback requests only). */
  origin: string | null;
  /** PORTAL_RP_ID, else the origin's host name. */
  rpId: string | null;
  /** PORTAL_REVERIFY_AFTER: rotation, disabling, scheme changes and passkey changes need a proof this recent. */
  reverifyAfterMs: number;
  /** TRUST_PROXY: when a forwarded client address is believed (client-address.ts). */
  trustProxy: TrustProxy;
}

export const DEFAULT_PORTAL_SETTINGS: PortalSettings = { origin: null, rpId: null, reverifyAfterMs: 5 * 60_000, trustProxy: TRUST_PROXY_OFF };

/** Reads PORTAL_ORIGIN, PORTAL_RP_ID, PORTAL_REVERIFY_AFTER, TRUST_PROXY and TRUST_PROXY_HEADER; throws an Error naming the setting. */
export function portalSettings(env: NodeJS.ProcessEnv): PortalSettings {
  const reverifyAfterMs = parseDuration('PORTAL_REVERIFY_AFTER', env.PORTAL_REVERIFY_AFTER || '5m');
  const origin = env.PORTAL_ORIGIN ? originOf(env.PORTAL_ORIGIN) : null;
  const rpIdRaw = env.PORTAL_RP_ID || null;
  if (rpIdRaw !== null && origin === null) throw new Error('PORTAL_RP_ID needs PORTAL_ORIGIN: the relying party ID must fit the origin the portal is served on');
  const rpId = origin === null ? null : (rpIdRaw ?? new URL(origin).hostname);
  if (origin !== null && rpId !== null && !rpIdFits(rpId, new URL(origin).hostname)) {
    throw new Error(`PORTAL_RP_ID=${rpId} does not fit PORTAL_ORIGIN=${origin}: it must be the origin's host name or a domain it belongs to`);
  }
  if (rpId !== null && isPublicSuffix(rpId)) {
    throw new Error(`PORTAL_RP_ID=${rpId} is a public suffix (Public Suffix List): every site under it could use the passkeys. Use your own domain, such as portal.example.com or example.com`);
  }
  return { origin, rpId, reverifyAfterMs, trustProxy: parseTrustProxy(env.TRUST_PROXY, env.TRUST_PROXY_HEADER) };
}

function originOf(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`PORTAL_ORIGIN must be an origin such as https://portal.example.com, not ${raw}`);
  }
  if (url.origin !== raw.replace(/\/$/, '')) throw new Error(`PORTAL_ORIGIN must be an origin only (scheme, host, port), such as ${url.origin}, not ${raw}`);
  if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) throw new Error(`PORTAL_ORIGIN must use https (passkeys need a secure context), not ${raw}`);
  if (isIpAddress(url.hostname)) throw new Error(`PORTAL_ORIGIN must name a host, not an IP address (a passkey's relying party is a domain): ${raw}`);
  return url.origin;
}

/** WebAuthn: the RP ID is the origin's host or a registrable suffix of it. */
export function rpIdFits(rpId: string, host: string): boolean {
  return host === rpId || (host.endsWith(`.${rpId}`) && rpId.includes('.'));
}

/**
 * A suffix under which anyone may register a name (com, co.uk, github.io), by the Public Suffix
 * List of tldts, private section included. A host the list does not name is no suffix: tldts
 * answers an unlisted single label (an intranet name such as `portal`) as its own suffix by the
 * list's default rule, but browsers take it as an RP ID, as they take `localhost`.
 */
export function isPublicSuffix(host: string): boolean {
  if (isLoopbackHost(host)) return false;
  const { publicSuffix, isIcann, isPrivate } = parse(host, { allowPrivateDomains: true });
  return publicSuffix === host && (isIcann === true || isPrivate === true);
}

export const isLoopbackHost = (host: string): boolean => host === 'localhost' || host.endsWith('.localhost') || host === '127.0.0.1' || host === '[::1]';

export const isIpAddress = (host: string): boolean => /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith('[');
