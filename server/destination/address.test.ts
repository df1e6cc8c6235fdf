import { describe, expect, it } from 'vitest';
import { classifyAddress, classifyIPv4, embeddedIPv4, parseIPv6 } from './address.ts';

describe('classifyIPv4', () => {
  it.each([
    ['0.0.0.0', 'reserved-address'],
    ['0.255.255.255', 'reserved-address'],
    ['10.0.0.0', 'private-address'],
    ['10.255.255.255', 'private-address'],
    ['100.64.0.0', 'cgnat-address'],
    ['100.127.255.255', 'cgnat-address'],
    ['127.0.0.1', 'loopback-address'],
    ['127.255.255.254', 'loopback-address'],
    ['169.254.0.1', 'link-local-address'],
    ['169.254.169.254', 'link-local-address'],
    ['172.16.0.0', 'private-address'],
    ['172.31.255.255', 'private-address'],
    ['192.0.0.8', 'reserved-address'],
    ['192.0.2.1', 'reserved-address'],
    ['192.88.99.1', 'reserved-address'],
    ['192.168.0.1', 'private-address'],
    ['198.18.0.1', 'reserved-address'],
    ['198.19.255.255', 'reserved-address'],
    ['198.51.100.7', 'reserved-address'],
    ['203.0.113.9', 'reserved-address'],
    ['224.0.0.1', 'multicast-address'],
    ['239.255.255.255', 'multicast-address'],
    ['240.0.0.1', 'reserved-address'],
    ['255.255.255.255', 'reserved-address'],
  ] as const)('%s is %s', (address, rule) => {
    expect(classifyIPv4(address)).toBe(rule);
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '93.184.215.14',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.255',
    '192.0.3.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
  ])('%s is public', (address) => {
    expect(classifyIPv4(address)).toBeNull();
  });

  it('rejects input that is not a dotted-quad IPv4 address', () => {
    expect(() => classifyIPv4('2130706433')).toThrow(TypeError);
    expect(() => classifyIPv4('127.1')).toThrow(TypeError);
    expect(() => classifyIPv4('::1')).toThrow(TypeError);
  });
});

describe('IPv6 forms', () => {
  it('parses the usual spellings', () => {
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('::ffff:127.0.0.1')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(parseIPv6('2001:db8::1')).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('fe80::1%eth0')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('127.0.0.1')).toBeNull();
  });

  it.each([
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['0:0:0:0:0:ffff:a00:1', '10.0.0.1'],
    ['::ffff:0:a9fe:a9fe', '169.254.169.254'],
    ['::7f00:1', '127.0.0.1'],
    ['::8.8.8.8', '8.8.8.8'],
  ])('%s embeds %s', (address, ipv4) => {
    expect(embeddedIPv4(address)).toBe(ipv4);
  });

  it.each(['::', '::1', '2001:db8::1', 'fe80::1', '64:ff9b::a00:1', '1::ffff:7f00:1'])('%s embeds nothing', (address) => {
    expect(embeddedIPv4(address)).toBeNull();
  });

  it('classifies embedded IPv4 by the IPv4 address and other IPv6 as unsupported', () => {
    expect(classifyAddress('::ffff:7f00:1')).toBe('loopback-address');
    expect(classifyAddress('::ffff:192.168.0.1')).toBe('private-address');
    expect(classifyAddress('::ffff:8.8.8.8')).toBeNull();
    expect(classifyAddress('::1')).toBe('ipv6-not-supported');
    expect(classifyAddress('2606:4700::1111')).toBe('ipv6-not-supported');
    expect(classifyAddress('8.8.8.8')).toBeNull();
    expect(() => classifyAddress('example.com')).toThrow(TypeError);
  });
});
