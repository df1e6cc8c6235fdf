/**
 * Classification of IP addresses against the destination rules. A webhook destination must
 * be a public IPv4 address; `null` means "public".
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { AddressRule } from './rules.ts';

type Ipv4Rule = Exclude<AddressRule, 'ipv6-not-supported'>;

/** Non-public IPv4 ranges (IANA IPv4 Special-Purpose Address Registry and RFC 5735 / 6890). */
const IPV4_RANGES: ReadonlyArray<readonly [network: string, prefix: number, rule: Ipv4Rule]> = [
  ['0.0.0.0', 8, 'reserved-address'], // "this network", includes the unspecified 0.0.0.0 (RFC 791, 1122)
  ['10.0.0.0', 8, 'private-address'], // RFC 1918
  ['100.64.0.0', 10, 'cgnat-address'], // shared address space (RFC 6598)
  ['127.0.0.0', 8, 'loopback-address'], // RFC 1122
  ['169.254.0.0', 16, 'link-local-address'], // RFC 3927, includes cloud metadata 169.254.169.254
  ['172.16.0.0', 12, 'private-address'], // RFC 1918
  ['192.0.0.0', 24, 'reserved-address'], // IETF protocol assignments (RFC 6890)
  ['192.0.2.0', 24, 'reserved-address'], // TEST-NET-1 documentation (RFC 5737)
  ['192.88.99.0', 24, 'reserved-address'], // deprecated 6to4 relay anycast (RFC 7526)
  ['192.168.0.0', 16, 'private-address'], // RFC 1918
  ['198.18.0.0', 15, 'reserved-address'], // benchmarking (RFC 2544)
  ['198.51.100.0', 24, 'reserved-address'], // TEST-NET-2 documentation (RFC 5737)
  ['203.0.113.0', 24, 'reserved-address'], // TEST-NET-3 documentation (RFC 5737)
  ['224.0.0.0', 4, 'multicast-address'], // RFC 5771
  ['240.0.0.0', 4, 'reserved-address'], // future use (RFC 1112), includes broadcast 255.255.255.255 (RFC 919)
];

const BLOCK_LISTS: ReadonlyArray<readonly [BlockList, Ipv4Rule]> = (() => {
  const byRule = new Map<Ipv4Rule, BlockList>();
  for (const [network, prefix, rule] of IPV4_RANGES) {
    let list = byRule.get(rule);
    if (list === undefined) {
      list = new BlockList();
      byRule.set(rule, list);
    }
    list.addSubnet(network, prefix, 'ipv4');
  }
  return [...byRule].map(([rule, list]) => [list, rule] as const);
})();

/**
 * The rule a dotted-quad IPv4 address breaks, or `null` when it is a public address.
 * Throws a `TypeError` for anything that is not a dotted-quad IPv4 address (pass URL
 * hostnames through the WHATWG URL parser first: it turns `2130706433`, `0177.0.0.1`
 * and `0x7f.1` into `127.0.0.1`).
 */
export function classifyIPv4(address: string): Ipv4Rule | null {
  if (!isIPv4(address)) throw new TypeError(`not an IPv4 address: ${JSON.stringify(address)}`);
  for (const [list, rule] of BLOCK_LISTS) {
    if (list.check(address, 'ipv4')) return rule;
  }
  return null;
}

/** The eight 16-bit groups of an IPv6 address (zone id ignored), or `null` when it is not one. */
export function parseIPv6(address: string): number[] | null {
  const zone = address.indexOf('%');
  const text = zone === -1 ? address : address.slice(0, zone);
  if (!isIPv6(text)) return null;

  const toGroups = (part: string): number[] => {
    if (part === '') return [];
    const groups: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const octets = piece.split('.').map(Number);
        groups.push(((octets[0] ?? 0) << 8) | (octets[1] ?? 0), ((octets[2] ?? 0) << 8) | (octets[3] ?? 0));
      } else {
        groups.push(Number.parseInt(piece, 16));
      }
    }
    return groups;
  };

  const gap = text.indexOf('::');
  if (gap === -1) {
    const groups = toGroups(text);
    return groups.length === 8 ? groups : null;
  }
  const head = toGroups(text.slice(0, gap));
  const tail = toGroups(text.slice(gap + 2));
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/**
 * The IPv4 address embedded in an IPv6 address that designates an IPv4 host, or `null`:
 * IPv4-mapped `::ffff:a.b.c.d` (also written `::ffff:7f00:1`), IPv4-translated
 * `::ffff:0:a.b.c.d` and the deprecated IPv4-compatible `::a.b.c.d` (except `::` and `::1`,
 * which are the IPv6 unspecified and loopback addresses, and other `::/112` values).
 */
export function embeddedIPv4(address: string): string | null {
  const groups = parseIPv6(address);
  if (groups === null) return null;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  if (g0 !== 0 || g1 !== 0 || g2 !== 0 || g3 !== 0) return null;
  const mapped = g4 === 0 && g5 === 0xffff;
  const translated = g4 === 0xffff && g5 === 0;
  const compatible = g4 === 0 && g5 === 0 && g6 !== 0;
  if (!mapped && !translated && !compatible) return null;
  return `${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`;
}

/**
 * The rule an IPv4 or IPv6 address breaks, or `null` when it is a public IPv4 address.
 * An IPv6 address that embeds an IPv4 address (see `embeddedIPv4`) is judged by that IPv4
 * address, so a mapped public address is `null`; every other IPv6 address is
 * `ipv6-not-supported`. Throws a `TypeError` for anything that is not an IP address.
 */
export function classifyAddress(address: string): AddressRule | null {
  if (isIPv4(address)) return classifyIPv4(address);
  if (parseIPv6(address) === null) throw new TypeError(`not an IP address: ${JSON.stringify(address)}`);
  const embedded = embeddedIPv4(address);
  return embedded === null ? 'ipv6-not-supported' : classifyIPv4(embedded);
}
