// The portal's settings as read at start: PORTAL_ORIGIN, PORTAL_RP_ID, PORTAL_REVERIFY_AFTER and
// TRUST_PROXY, each refusal naming its setting; and the client address TRUST_PROXY gives.
import { describe, expect, it } from 'vitest';
import { clientAddressOf, forwardedFor, forwardedProto, limitedAddress, parseTrustProxy } from './client-address.ts';
import { DEFAULT_PORTAL_SETTINGS, portalSettings } from './settings.ts';

const refusal = (env: NodeJS.ProcessEnv): string => {
  try {
    portalSettings(env);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

describe('PORTAL_ORIGIN', () => {
  it('is unset by default: loopback requests only, five minutes, no proxy trusted', () => {
    expect(portalSettings({})).toEqual(DEFAULT_PORTAL_SETTINGS);
    expect(DEFAULT_PORTAL_SETTINGS).toEqual({ origin: null, rpId: null, reverifyAfterMs: 300_000, trustProxy: { kind: 'off' } });
  });

  it('takes an https origin (a trailing slash aside) and derives the RP ID from its host', () => {
    expect(portalSettings({ PORTAL_ORIGIN: 'https://portal.example.com/' })).toMatchObject({ origin: 'https://portal.example.com', rpId: 'portal.example.com' });
    expect(portalSettings({ PORTAL_ORIGIN: 'https://portal.example.com:8443' })).toMatchObject({ origin: 'https://portal.example.com:8443', rpId: 'portal.example.com' });
    expect(portalSettings({ PORTAL_ORIGIN: 'http://localhost:8080' })).toMatchObject({ origin: 'http://localhost:8080', rpId: 'localhost' });
  });

  it('refuses what is not an origin, plain http off loopback, and an IP address', () => {
    expect(refusal({ PORTAL_ORIGIN: 'portal.example.com' })).toMatch(/^PORTAL_ORIGIN must be an origin/);
    expect(refusal({ PORTAL_ORIGIN: 'https://portal.example.com/app' })).toMatch(/^PORTAL_ORIGIN must be an origin only/);
    expect(refusal({ PORTAL_ORIGIN: 'https://portal.example.com?x=1' })).toMatch(/^PORTAL_ORIGIN must be an origin only/);
    expect(refusal({ PORTAL_ORIGIN: 'http://portal.example.com' })).toMatch(/^PORTAL_ORIGIN must use https/);
    expect(refusal({ PORTAL_ORIGIN: 'https://203.0.113.5' })).toMatch(/^PORTAL_ORIGIN must name a host, not an IP address/);
    expect(refusal({ PORTAL_ORIGIN: 'http://127.0.0.1:8080' })).toMatch(/^PORTAL_ORIGIN must name a host, not an IP address/);
  });
});

describe('PORTAL_RP_ID', () => {
  it('takes the origin’s host or a registrable domain it belongs to', () => {
    expect(portalSettings({ PORTAL_ORIGIN: 'https://portal.example.com', PORTAL_RP_ID: 'example.com' }).rpId).toBe('example.com');
    expect(portalSettings({ PORTAL_ORIGIN: 'https://portal.example.co.uk', PORTAL_RP_ID: 'example.co.uk' }).rpId).toBe('example.co.uk');
  });

  it('refuses one without PORTAL_ORIGIN, and one the origin does not belong to', () => {
    expect(refusal({ PORTAL_RP_ID: 'example.com' })).toMatch(/^PORTAL_RP_ID needs PORTAL_ORIGIN/);
    expect(refusal({ PORTAL_ORIGIN: 'https://portal.example.com', PORTAL_RP_ID: 'other.example' })).toMatch(/^PORTAL_RP_ID=other\.example does not fit PORTAL_ORIGIN/);
    expect(refusal({ PORTAL_ORIGIN: 'https://portal.example.com', PORTAL_RP_ID: 'ample.com' })).toMatch(/does not fit/);
  });

  it('refuses a public suffix, from the ICANN and the private sections of the list', () => {
    expect(refusal({ PORTAL_ORIGIN: 'https://portal.example.co.uk', PORTAL_RP_ID: 'co.uk' })).toMatch(/^PORTAL_RP_ID=co\.uk is a public suffix/);
    expect(refusal({ PORTAL_ORIGIN: 'https://merchant.github.io', PORTAL_RP_ID: 'github.io' })).toMatch(/^PORTAL_RP_ID=github\.io is a public suffix/);
    expect(refusal({ PORTAL_ORIGIN: 'https://github.io' })).toMatch(/^PORTAL_RP_ID=github\.io is a public suffix/);
    expect(portalSettings({ PORTAL_ORIGIN: 'https://merchant.github.io' }).rpId).toBe('merchant.github.io');
  });

  it('takes a single-label host (an intranet name, as browsers do), but no single label the list names', () => {
    expect(portalSettings({ PORTAL_ORIGIN: 'https://portal' })).toMatchObject({ origin: 'https://portal', rpId: 'portal' });
    expect(portalSettings({ PORTAL_ORIGIN: 'https://payments-portal:8443' }).rpId).toBe('payments-portal');
    expect(refusal({ PORTAL_ORIGIN: 'https://com' })).toMatch(/^PORTAL_RP_ID=com is a public suffix/);
    expect(refusal({ PORTAL_ORIGIN: 'https://uk' })).toMatch(/^PORTAL_RP_ID=uk is a public suffix/);
    expect(refusal({ PORTAL_ORIGIN: 'https://portal.example.co.uk', PORTAL_RP_ID: 'co.uk' })).toMatch(/^PORTAL_RP_ID=co\.uk is a public suffix/);
  });
});

describe('PORTAL_REVERIFY_AFTER', () => {
  it('takes a duration', () => {
    expect(portalSettings({ PORTAL_REVERIFY_AFTER: '90s' }).reverifyAfterMs).toBe(90_000);
    expect(portalSettings({ PORTAL_REVERIFY_AFTER: '15m' }).reverifyAfterMs).toBe(900_000);
    expect(portalSettings({ PORTAL_REVERIFY_AFTER: '1h' }).reverifyAfterMs).toBe(3_600_000);
    expect(portalSettings({ PORTAL_REVERIFY_AFTER: '' }).reverifyAfterMs).toBe(300_000);
  });

  it('refuses what is not a positive duration', () => {
    for (const raw of ['5', '0m', '-5m', '5 minutes', 'soon']) expect(refusal({ PORTAL_REVERIFY_AFTER: raw })).toMatch(/^PORTAL_REVERIFY_AFTER must be a positive duration/);
  });
});

describe('TRUST_PROXY', () => {
  it('is off by default; takes a hop count or addresses and CIDR ranges', () => {
    expect(parseTrustProxy(undefined)).toEqual({ kind: 'off' });
    expect(parseTrustProxy('off')).toEqual({ kind: 'off' });
    expect(parseTrustProxy('2')).toEqual({ kind: 'hops', hops: 2, header: 'x-forwarded-for' });
    expect(parseTrustProxy('10.0.0.0/8, 192.0.2.7,2001:db8::/32')).toEqual({ kind: 'addresses', list: ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32'], header: 'x-forwarded-for' });
    expect(portalSettings({ TRUST_PROXY: '1' }).trustProxy).toEqual({ kind: 'hops', hops: 1, header: 'x-forwarded-for' });
    expect(portalSettings({ TRUST_PROXY: '1', TRUST_PROXY_HEADER: 'Forwarded' }).trustProxy).toEqual({ kind: 'hops', hops: 1, header: 'forwarded' });
  });

  it('refuses anything else, naming the setting', () => {
    for (const raw of ['0', '11', 'yes', 'loadbalancer.internal', '10.0.0.0/99', '10.0.0.0/x']) expect(() => parseTrustProxy(raw), raw).toThrow(/^TRUST_PROXY/);
    expect(refusal({ TRUST_PROXY: 'on' })).toMatch(/^TRUST_PROXY/);
    expect(refusal({ TRUST_PROXY: '1', TRUST_PROXY_HEADER: 'x-real-ip' })).toMatch(/^TRUST_PROXY_HEADER must be/);
  });

  it('off: the peer, whatever the headers say', () => {
    expect(clientAddressOf('192.0.2.1', { xForwardedFor: '203.0.113.9', forwarded: 'for=203.0.113.8' }, { kind: 'off' })).toBe('192.0.2.1');
  });

  it('a hop count: the address the nearest proxies name, never one the client wrote before them', () => {
    const one = parseTrustProxy('1');
    expect(clientAddressOf('10.0.0.5', { xForwardedFor: '203.0.113.9' }, one)).toBe('203.0.113.9');
    expect(clientAddressOf('10.0.0.5', { xForwardedFor: '198.51.100.66, 203.0.113.9' }, one)).toBe('203.0.113.9');
    expect(clientAddressOf('10.0.0.5', { xForwardedFor: '198.51.100.66, 203.0.113.9' }, parseTrustProxy('2'))).toBe('198.51.100.66');
    expect(clientAddressOf('10.0.0.5', {}, one)).toBe('10.0.0.5');
  });

  it('a list: the first address from the right that is not one of ours', () => {
    const ours = parseTrustProxy('10.0.0.0/8');
    expect(clientAddressOf('10.0.0.5', { xForwardedFor: '198.51.100.66, 203.0.113.9, 10.1.2.3' }, ours)).toBe('203.0.113.9');
    // A peer that is not ours is the client, whatever it forwards.
    expect(clientAddressOf('192.0.2.1', { xForwardedFor: '203.0.113.9' }, ours)).toBe('192.0.2.1');
  });

  it('reads only the header the proxies write: Forwarded for= (quoted, ports, IPv6) when TRUST_PROXY_HEADER=forwarded', () => {
    expect(forwardedFor('for=192.0.2.43, for="[2001:db8:cafe::17]:4711";proto=https, For="198.51.100.1:80";by=10.0.0.1')).toEqual(['192.0.2.43', '2001:db8:cafe::17', '198.51.100.1']);
    const headers = { forwarded: 'for=198.51.100.66, for="[2001:db8::1]"', xForwardedFor: '203.0.113.9' };
    expect(clientAddressOf('10.0.0.5', headers, parseTrustProxy('1', 'forwarded'))).toBe('2001:db8::1');
    // A Forwarded header the client wrote itself is ignored when the proxy writes X-Forwarded-For.
    expect(clientAddressOf('10.0.0.5', headers, parseTrustProxy('1'))).toBe('203.0.113.9');
  });
});

describe('forwardedProto', () => {
  it('reads nothing with trust off, the nearest value of the header the proxies write otherwise', () => {
    const headers = { xForwardedProto: 'http, HTTPS', forwarded: 'for=192.0.2.1;proto=http, for=203.0.113.9;proto="https"' };
    expect(forwardedProto(headers, parseTrustProxy('off'))).toBeUndefined();
    expect(forwardedProto(headers, parseTrustProxy('1'))).toBe('https');
    expect(forwardedProto({ xForwardedProto: 'https, http' }, parseTrustProxy('1'))).toBe('http');
    expect(forwardedProto(headers, parseTrustProxy('1', 'forwarded'))).toBe('https');
    // The nearest proxy said nothing: an earlier element may be the client's own.
    expect(forwardedProto({ forwarded: 'for=192.0.2.1;proto=https, for=203.0.113.9' }, parseTrustProxy('1', 'forwarded'))).toBeUndefined();
    expect(forwardedProto({ xForwardedProto: 'https' }, parseTrustProxy('1', 'forwarded'))).toBeUndefined();
  });
});

describe('limitedAddress', () => {
  it('keys an IPv6 address by its /64 however it is written, an IPv4 one (mapped or not) by itself', () => {
    for (const a of ['2001:db8:1:2::1', '2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::', '2001:DB8:1:2:0:0:0:9', '2001:db8:1:2::1%eth0', '2001:db8:1:2::198.51.100.7']) {
      expect(limitedAddress(a), a).toBe('2001:db8:1:2::/64');
    }
    expect(limitedAddress('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(limitedAddress('::1')).toBe('0:0:0:0::/64');
    expect(limitedAddress('fe80::1:2')).toBe('fe80:0:0:0::/64');
    expect(limitedAddress('198.51.100.7')).toBe('198.51.100.7');
    expect(limitedAddress('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(limitedAddress('::ffff:c633:6407')).toBe('198.51.100.7');
    expect(limitedAddress('unknown')).toBe('unknown');
  });
});
