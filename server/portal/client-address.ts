// Which client a request came from, for the portal's per-address limits. Off by default: the
// TCP peer, because a forwarded address is whatever the client wrote. TRUST_PROXY says when to
// believe one: a hop count (the nearest N proxies are ours) or the addresses/CIDR ranges of our
// proxies. The chain is read right to left (proxy-addr, the library Express uses): the client is
// the first address not trusted. TRUST_PROXY_HEADER names the one header the proxies write,
// `X-Forwarded-For` (default) or RFC 7239 `Forwarded` (its `for=` values): the other one is
// whatever the client sent, so it is never read. The limits count an IPv6 client by its /64.
import { isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import proxyaddr from 'proxy-addr';

export type ForwardedHeader = 'x-forwarded-for' | 'forwarded';
export type TrustProxy = { kind: 'off' } | { kind: 'hops'; hops: number; header: ForwardedHeader } | { kind: 'addresses'; list: string[]; header: ForwardedHeader };

export const TRUST_PROXY_OFF: TrustProxy = { kind: 'off' };

/**
 * Reads TRUST_PROXY: `off` (default), a hop count such as `1`, or addresses and CIDR ranges
 * separated by commas; and TRUST_PROXY_HEADER. Throws naming the setting.
 */
export function parseTrustProxy(raw: string | undefined, headerRaw?: string): TrustProxy {
  const value = (raw ?? '').trim();
  const header = (headerRaw ?? '').trim().toLowerCase() || 'x-forwarded-for';
  if (header !== 'x-forwarded-for' && header !== 'forwarded') throw new Error(`TRUST_PROXY_HEADER must be x-forwarded-for or forwarded (the header your proxies write), not ${headerRaw}`);
  if (value === '' || value === 'off' || value === 'false') return TRUST_PROXY_OFF;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 10) throw new Error(`TRUST_PROXY as a hop count must be from 1 to 10 (the proxies in front of the server), not ${value}`);
    return { kind: 'hops', hops, header };
  }
  const list = value.split(',').map((s) => s.trim()).filter(Boolean);
  for (const entry of list) {
    const [address = '', bits] = entry.split('/');
    if (isIP(address) === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits))) {
      throw new Error(`TRUST_PROXY must be off, a hop count, or proxy addresses and CIDR ranges separated by commas (10.0.0.0/8,192.0.2.7), not ${value}`);
    }
  }
  try {
    proxyaddr.compile(list);
  } catch (e) {
    throw new Error(`TRUST_PROXY: ${(e as Error).message}`);
  }
  return { kind: 'addresses', list, header };
}

/** The `for=` addresses of a Forwarded header, nearest last, as X-Forwarded-For lists them. */
export function forwardedFor(header: string): string[] {
  const out: string[] = [];
  for (const element of header.split(',')) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      let value = pair.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
      if (v6?.[1]) value = v6[1];
      else if (/^[\d.]+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
      out.push(value);
    }
  }
  return out;
}

const compiledLists = new WeakMap<string[], (addr: string, i: number) => boolean>();
function compiled(list: string[]): (addr: string, i: number) => boolean {
  let fn = compiledLists.get(list);
  if (!fn) compiledLists.set(list, (fn = proxyaddr.compile(list)));
  return fn;
}

/** The TCP peer of a request, or `unknown` when it came through no socket (app.request in tests). */
export function peerOf(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Whether the TCP peer is one of our proxies: any peer under a hop count, a listed one under a list. */
export function isTrustedPeer(peer: string, trust: TrustProxy): boolean {
  if (trust.kind === 'off') return false;
  if (trust.kind === 'hops') return true;
  return isIP(peer) !== 0 && compiled(trust.list)(peer, 0);
}

/**
 * The scheme our nearest proxy says the client used, from the header the proxies write
 * (TRUST_PROXY_HEADER): the last X-Forwarded-Proto value beside X-Forwarded-For, else the `proto=`
 * of Forwarded's last element, since a proxy that appends puts its own word last and anything
 * before it may be the client's. Undefined when trust is off or the nearest proxy said nothing.
 */
export function forwardedProto(headers: { forwarded?: string | undefined; xForwardedProto?: string | undefined }, trust: TrustProxy): string | undefined {
  if (trust.kind === 'off') return undefined;
  const nearest = (header: string | undefined) => (header ?? '').split(',').at(-1) ?? '';
  const value = trust.header === 'forwarded' ? protoOf(nearest(headers.forwarded)) : nearest(headers.xForwardedProto);
  return value.trim().replace(/^"(.*)"$/, '$1').toLowerCase() || undefined;
}

/** The `proto=` value of one Forwarded element, or ''. */
const protoOf = (element: string): string => {
  const pair = element.split(';').find((p) => /^\s*proto\s*=/i.test(p));
  return pair === undefined ? '' : pair.slice(pair.indexOf('=') + 1);
};

/** The client address of a request from `peer` with these headers, under `trust`. */
export function clientAddressOf(peer: string, headers: { forwarded?: string | undefined; xForwardedFor?: string | undefined }, trust: TrustProxy): string {
  if (trust.kind === 'off') return peer;
  const chain = trust.header === 'forwarded' ? forwardedFor(headers.forwarded ?? '').join(', ') : (headers.xForwardedFor ?? '');
  const req = { socket: { remoteAddress: peer }, connection: { remoteAddress: peer }, headers: { 'x-forwarded-for': chain } };
  const trusted = trust.kind === 'hops' ? (_addr: string, i: number) => i < trust.hops : compiled(trust.list);
  return proxyaddr(req as unknown as Parameters<typeof proxyaddr>[0], trusted);
}

/**
 * The key a client address is limited by: an IPv4 address itself (an IPv4-mapped IPv6 one too),
 * an IPv6 address its /64, since one subscriber's network holds 2^64 addresses to rotate through.
 * Anything else (no peer) as it is.
 */
export function limitedAddress(address: string): string {
  const bare = address.replace(/%.*$/, '');
  if (isIP(bare) !== 6) return address;
  const h = hextetsOf(bare);
  if (h.slice(0, 5).every((x) => x === 0) && h[5] === 0xffff) return [h[6]! >> 8, h[6]! & 0xff, h[7]! >> 8, h[7]! & 0xff].join('.');
  return `${h.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function hextetsOf(v6: string): number[] {
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(v6);
  const text = tail ? `${v6.slice(0, tail.index)}${((Number(tail[1]) << 8) | Number(tail[2])).toString(16)}:${((Number(tail[3]) << 8) | Number(tail[4])).toString(16)}` : v6;
  const [head = '', rest] = text.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const zeros: string[] = rest === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((x) => parseInt(x, 16));
}
