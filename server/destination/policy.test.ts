import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createGuardedConnector } from './connector.ts';
import {
  createDestinationPolicy,
  createDestinationPolicyFromEnv,
  DestinationPolicyConfigError,
} from './policy.ts';
import type { DestinationPolicy, Resolver } from './policy.ts';
import { DESTINATION_RULES, DestinationRefusedError } from './rules.ts';
import type { DestinationRule } from './rules.ts';

// No test here may connect anywhere but 127.0.0.1: every other address is only ever
// handed to the policy by fake resolvers, never to a socket.

const PUBLIC = '93.184.215.14';

type Answer = { address: string; family: 4 | 6 };
type FakeResolver = Resolver & { calls: string[] };

/** A resolver answering from a table; a function entry gets the call count (to change answers). */
function fakeResolver(table: Record<string, Answer[] | Error | ((call: number) => Answer[])>): FakeResolver {
  const calls: string[] = [];
  const resolver = async (hostname: string): Promise<Answer[]> => {
    calls.push(hostname);
    const entry = table[hostname];
    if (entry === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
    }
    if (entry instanceof Error) throw entry;
    if (typeof entry === 'function') return entry(calls.filter((name) => name === hostname).length);
    return entry;
  };
  return Object.assign(resolver, { calls });
}

const v4 = (address: string): Answer => ({ address, family: 4 });
const v6 = (address: string): Answer => ({ address, family: 6 });

function refusal(fn: () => unknown): DestinationRefusedError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DestinationRefusedError);
    return err as DestinationRefusedError;
  }
  throw new Error('expected a DestinationRefusedError');
}

async function asyncRefusal(promise: Promise<unknown>): Promise<DestinationRefusedError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(DestinationRefusedError);
    return err as DestinationRefusedError;
  }
  throw new Error('expected a DestinationRefusedError');
}

function expectRule(err: DestinationRefusedError, rule: DestinationRule): void {
  expect(err.rule).toBe(rule);
  expect(err.code).toBe('EDESTINATION');
  expect(err.message.startsWith(`${rule}: `)).toBe(true);
  expect(err.detail.length).toBeGreaterThan(10);
}

describe('DestinationRule', () => {
  it('matches the DestinationRule enum of spec/common/schemas.yaml', () => {
    const schemas = parse(readFileSync(new URL('../../spec/common/schemas.yaml', import.meta.url), 'utf8')) as {
      DestinationRule: { enum: string[] };
    };
    expect([...DESTINATION_RULES]).toEqual(schemas.DestinationRule.enum);
  });

  it('names the rule and says what is wrong', () => {
    const err = refusal(() => createDestinationPolicy().checkUrl('http://hooks.example.com/webhooks'));
    expect(err.message).toBe('https-required: the URL must use https, not http');
    expect(err.detail).toBe('the URL must use https, not http');
  });
});

describe('checkUrl (save time)', () => {
  const policy = createDestinationPolicy({ resolve: fakeResolver({}) });

  it.each([
    ['', 'invalid-url'],
    ['not a url', 'invalid-url'],
    ['/webhooks', 'invalid-url'],
    ['https://', 'invalid-url'],
    ['https://1.2.3.256/', 'invalid-url'],
    ['http://hooks.example.com/webhooks', 'https-required'],
    ['ftp://hooks.example.com/webhooks', 'https-required'],
    ['javascript:alert(1)', 'https-required'],
    ['https://hooks.example.com:8443/webhooks', 'port-443-required'],
    ['https://hooks.example.com:80/webhooks', 'port-443-required'],
    ['https://user:pass@hooks.example.com/webhooks', 'no-credentials'],
    ['https://user@hooks.example.com/webhooks', 'no-credentials'],
    ['https://:secret@hooks.example.com/webhooks', 'no-credentials'],
    ['https://hooks.example.com/webhooks#orders', 'no-fragment'],
    ['https://hooks.example.com/webhooks#', 'no-fragment'],
    ['https://127.0.0.1/', 'loopback-address'],
    ['https://127.8.9.10/webhooks', 'loopback-address'],
    ['https://localhost/', 'loopback-address'],
    ['https://LOCALHOST./webhooks', 'loopback-address'],
    ['https://shop.localhost/webhooks', 'loopback-address'],
    ['https://10.0.0.1/', 'private-address'],
    ['https://172.16.0.1/', 'private-address'],
    ['https://172.31.255.254/', 'private-address'],
    ['https://192.168.1.10/', 'private-address'],
    ['https://169.254.169.254/latest/meta-data/', 'link-local-address'],
    ['https://100.64.0.1/', 'cgnat-address'],
    ['https://224.0.0.1/', 'multicast-address'],
    ['https://0.0.0.0/', 'reserved-address'],
    ['https://255.255.255.255/', 'reserved-address'],
    ['https://198.18.0.1/', 'reserved-address'],
    ['https://192.0.2.10/', 'reserved-address'],
    ['https://240.0.0.1/', 'reserved-address'],
    // The WHATWG parser turns decimal, octal, hex and short forms into dotted IPv4.
    ['https://2130706433/', 'loopback-address'],
    ['https://0177.0.0.1/', 'loopback-address'],
    ['https://0x7f.1/', 'loopback-address'],
    ['https://0x7f000001/', 'loopback-address'],
    ['https://127.1/', 'loopback-address'],
    ['https://%31%32%37.0.0.1/', 'loopback-address'],
    ['https://167772161/', 'private-address'],
    ['https://0xa9fea9fe/', 'link-local-address'],
    ['https://0251.0376.0251.0376/', 'link-local-address'],
    // IPv6 literals: embedded non-public IPv4 names its rule, everything else is unsupported.
    ['https://[::1]/', 'ipv6-not-supported'],
    ['https://[::ffff:127.0.0.1]/', 'loopback-address'],
    ['https://[::ffff:7f00:1]/', 'loopback-address'],
    ['https://[::ffff:a9fe:a9fe]/', 'link-local-address'],
    ['https://[::ffff:0:10.0.0.1]/', 'private-address'],
    ['https://[::127.0.0.1]/', 'loopback-address'],
    ['https://[::ffff:8.8.8.8]/', 'ipv6-not-supported'],
    ['https://[2001:db8::1]/', 'ipv6-not-supported'],
    ['https://[2606:4700:4700::1111]/', 'ipv6-not-supported'],
  ] as const)('refuses %j: %s', (raw, rule) => {
    expectRule(refusal(() => policy.checkUrl(raw)), rule);
  });

  it('accepts a public host name and a public IPv4 literal without resolving them', () => {
    expect(policy.checkUrl('https://hooks.example.com/webhooks?shop=42')).toEqual({
      href: 'https://hooks.example.com/webhooks?shop=42',
      protocol: 'https:',
      hostname: 'hooks.example.com',
      port: 443,
      hostKind: 'name',
    });
    expect(policy.checkUrl(`https://${PUBLIC}/hook`)).toMatchObject({ hostname: PUBLIC, port: 443, hostKind: 'ipv4' });
  });

  it('accepts an explicit :443 and returns the normalized URL to store', () => {
    expect(policy.checkUrl('HTTPS://Hooks.Example.COM:443/webhooks').href).toBe('https://hooks.example.com/webhooks');
  });

  it('names the literal address in the detail', () => {
    const err = refusal(() => policy.checkUrl('https://[::ffff:7f00:1]/'));
    expect(err.detail).toContain('127.0.0.1');
    expect(err.address).toBe('::ffff:7f00:1');
  });
});

describe('resolve (connect time)', () => {
  it('returns the first IPv4 address of a public name', async () => {
    const resolver = fakeResolver({ 'hooks.example.com': [v6('2606:2800:21f:cb07:6820:80da:af6b:8b2c'), v4(PUBLIC), v4('93.184.215.15')] });
    const policy = createDestinationPolicy({ resolve: resolver });
    const resolved = await policy.resolve(policy.checkUrl('https://hooks.example.com/webhooks'));
    expect(resolved).toMatchObject({ address: PUBLIC, family: 4, port: 443 });
    expect(resolved.url.href).toBe('https://hooks.example.com/webhooks');
    expect(resolver.calls).toEqual(['hooks.example.com']);
  });

  it('accepts a public IPv4 literal without DNS', async () => {
    const resolver = fakeResolver({});
    const policy = createDestinationPolicy({ resolve: resolver });
    await expect(policy.resolve(`https://${PUBLIC}/hook`)).resolves.toMatchObject({ address: PUBLIC });
    expect(resolver.calls).toEqual([]);
  });

  it('re-checks the URL itself before resolving', async () => {
    const resolver = fakeResolver({ 'hooks.example.com': [v4(PUBLIC)] });
    const policy = createDestinationPolicy({ resolve: resolver });
    expectRule(await asyncRefusal(policy.resolve('http://hooks.example.com/')), 'https-required');
    expectRule(await asyncRefusal(policy.resolve('https://localhost/')), 'loopback-address');
    expectRule(await asyncRefusal(policy.resolve('https://10.0.0.1/')), 'private-address');
    expect(resolver.calls).toEqual([]);
  });

  it('refuses a name that resolves only to IPv6', async () => {
    const policy = createDestinationPolicy({
      resolve: fakeResolver({ 'v6only.example.com': [v6('2001:db8::10'), v6('2001:db8::11')] }),
    });
    expectRule(await asyncRefusal(policy.resolve('https://v6only.example.com/')), 'ipv6-not-supported');
  });

  it('refuses a name that was public at save time and resolves to a private address at send time', async () => {
    const resolver = fakeResolver({
      'rebind.example.com': (call) => (call === 1 ? [v4(PUBLIC)] : [v4('10.0.0.5')]),
    });
    const policy = createDestinationPolicy({ resolve: resolver });
    const checked = policy.checkUrl('https://rebind.example.com/webhooks');
    await expect(policy.resolve(checked)).resolves.toMatchObject({ address: PUBLIC }); // at save time
    const err = await asyncRefusal(policy.resolve(checked)); // at send time
    expectRule(err, 'private-address');
    expect(err.address).toBe('10.0.0.5');
    expect(err.detail).not.toContain('10.0.0.5'); // internal DNS answers are not shown to merchants
  });

  it.each([
    [[v4(PUBLIC), v4('10.1.2.3')], 'private-address'],
    [[v4('192.168.0.7'), v4(PUBLIC)], 'private-address'],
    [[v4(PUBLIC), v4('169.254.169.254')], 'link-local-address'],
    [[v4(PUBLIC), v4('127.0.0.1')], 'loopback-address'],
    [[v4(PUBLIC), v4('100.100.100.200')], 'cgnat-address'],
    [[v4(PUBLIC), v4('0.0.0.0')], 'reserved-address'],
    [[v4(PUBLIC), v4('239.1.1.1')], 'multicast-address'],
    [[v4(PUBLIC), v6('::ffff:10.0.0.1')], 'private-address'],
    [[v4(PUBLIC), v6('::ffff:7f00:1')], 'loopback-address'],
  ] as const)('refuses an answer that mixes public and non-public addresses %j', async (answers, rule) => {
    const policy = createDestinationPolicy({ resolve: fakeResolver({ 'mixed.example.com': [...answers] }) });
    expectRule(await asyncRefusal(policy.resolve('https://mixed.example.com/')), rule);
  });

  it('refuses an unresolvable name and keeps the DNS error as the cause', async () => {
    const policy = createDestinationPolicy({ resolve: fakeResolver({}) });
    const err = await asyncRefusal(policy.resolve('https://missing.example.com/'));
    expectRule(err, 'unresolvable-host');
    expect((err.cause as { code?: string }).code).toBe('ENOTFOUND');
  });

  it('refuses an empty or malformed answer as unresolvable', async () => {
    const policy = createDestinationPolicy({
      resolve: fakeResolver({ 'empty.example.com': [], 'junk.example.com': [v4('not-an-ip')] }),
    });
    expectRule(await asyncRefusal(policy.resolve('https://empty.example.com/')), 'unresolvable-host');
    expectRule(await asyncRefusal(policy.resolve('https://junk.example.com/')), 'unresolvable-host');
  });

  it('never asks DNS about localhost names', async () => {
    // The default (system) resolver is not exercised here: tests send no DNS queries.
    const resolver = fakeResolver({ localhost: [v4(PUBLIC)], 'shop.localhost': [v4(PUBLIC)] });
    const policy = createDestinationPolicy({ resolve: resolver });
    expectRule(await asyncRefusal(policy.resolve('https://localhost/')), 'loopback-address');
    expectRule(await asyncRefusal(policy.resolveHost('shop.localhost')), 'loopback-address');
    expect(resolver.calls).toEqual([]);
  });
});

describe('lookup (for net.connect / undici)', () => {
  const call = (lookup: LookupFunction, hostname: string, options: Parameters<LookupFunction>[1]) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family: unknown }>((done) => {
      lookup(hostname, options, (err, address, family) => done({ err, address, family }));
    });

  it('calls back with the checked address in both callback shapes, resolving once per call', async () => {
    const resolver = fakeResolver({ 'hooks.example.com': (n) => (n === 1 ? [v4(PUBLIC)] : [v4('10.0.0.9')]) });
    const policy = createDestinationPolicy({ resolve: resolver });
    expect(await call(policy.lookup, 'hooks.example.com', {})).toEqual({ err: null, address: PUBLIC, family: 4 });
    // The next connection resolves again, and its private answer never reaches the socket.
    const second = await call(policy.lookup, 'hooks.example.com', { all: true });
    expect(second.err).toBeInstanceOf(DestinationRefusedError);
    expect(second.address).toBeUndefined();
    expect(resolver.calls).toEqual(['hooks.example.com', 'hooks.example.com']);

    const other = createDestinationPolicy({ resolve: fakeResolver({ 'hooks.example.com': [v4(PUBLIC)] }) });
    expect(await call(other.lookup, 'hooks.example.com', { all: true })).toEqual({
      err: null,
      address: [{ address: PUBLIC, family: 4 }],
      family: undefined,
    });
  });

  it('passes refusals as EDESTINATION errors', async () => {
    const policy = createDestinationPolicy({ resolve: fakeResolver({ 'evil.test': [v4('10.1.2.3')] }) });
    const { err } = await call(policy.lookup, 'evil.test', { all: true });
    expect(err).toBeInstanceOf(DestinationRefusedError);
    expectRule(err as DestinationRefusedError, 'private-address');
  });

  it('refuses an IPv6-only lookup', async () => {
    const policy = createDestinationPolicy({ resolve: fakeResolver({ 'hooks.example.com': [v4(PUBLIC)] }) });
    const { err } = await call(policy.lookup, 'hooks.example.com', { family: 6 });
    expectRule(err as DestinationRefusedError, 'ipv6-not-supported');
  });
});

describe('development setting (allowInsecure)', () => {
  const resolver = fakeResolver({
    'receiver.test': [v4('127.0.0.1')],
    'mixed.test': [v4('127.0.0.1'), v4('10.0.0.1')],
  });
  const policy = createDestinationPolicy({ allowInsecure: true, nodeEnv: 'development', resolve: resolver });

  it('accepts http, any port and loopback addresses', async () => {
    expect(policy.checkUrl('http://127.0.0.1:3456/x')).toMatchObject({ protocol: 'http:', port: 3456, hostKind: 'ipv4' });
    expect(policy.checkUrl('http://localhost:8080')).toMatchObject({ href: 'http://localhost:8080/', port: 8080 });
    expect(policy.checkUrl('https://localhost:8443/')).toMatchObject({ port: 8443 });
    await expect(policy.resolve('http://localhost:8080/')).resolves.toMatchObject({ address: '127.0.0.1', port: 8080 });
    await expect(policy.resolve('http://receiver.test:3000/')).resolves.toMatchObject({ address: '127.0.0.1' });
    expect(resolver.calls).toEqual(['receiver.test']); // localhost never goes to DNS
  });

  it.each([
    ['http://10.0.0.1/', 'private-address'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local-address'],
    ['http://192.168.1.1:8080/', 'private-address'],
    ['http://100.64.0.1/', 'cgnat-address'],
    ['http://0.0.0.0:3000/', 'reserved-address'],
    ['http://[::1]:3456/', 'ipv6-not-supported'],
    ['http://[::ffff:127.0.0.1]:3456/', 'ipv6-not-supported'],
    ['http://[::ffff:10.0.0.1]/', 'private-address'],
    ['http://user:pass@localhost:8080/', 'no-credentials'],
    ['http://localhost:8080/#x', 'no-fragment'],
    ['ftp://localhost/', 'https-required'],
  ] as const)('still refuses %s: %s', (raw, rule) => {
    expectRule(refusal(() => policy.checkUrl(raw)), rule);
  });

  it('still refuses a private address in a DNS answer', async () => {
    expectRule(await asyncRefusal(policy.resolve('http://mixed.test:3000/')), 'private-address');
  });

  it('is refused when NODE_ENV=production', () => {
    expect(() => createDestinationPolicy({ allowInsecure: true, nodeEnv: 'production' })).toThrow(
      DestinationPolicyConfigError,
    );
    expect(createDestinationPolicy({ allowInsecure: false, nodeEnv: 'production' }).allowInsecure).toBe(false);
  });

  it('reads WEBHOOK_ALLOW_INSECURE_URLS from the environment', () => {
    expect(createDestinationPolicyFromEnv({ NODE_ENV: 'development' }).allowInsecure).toBe(false);
    expect(createDestinationPolicyFromEnv({ WEBHOOK_ALLOW_INSECURE_URLS: 'false', NODE_ENV: 'test' }).allowInsecure).toBe(false);
    expect(createDestinationPolicyFromEnv({ WEBHOOK_ALLOW_INSECURE_URLS: 'true', NODE_ENV: 'test' }).allowInsecure).toBe(true);
    expect(() => createDestinationPolicyFromEnv({ WEBHOOK_ALLOW_INSECURE_URLS: 'yes', NODE_ENV: 'test' })).toThrow(
      DestinationPolicyConfigError,
    );
    expect(() =>
      createDestinationPolicyFromEnv({ WEBHOOK_ALLOW_INSECURE_URLS: 'true', NODE_ENV: 'production' }),
    ).toThrow(DestinationPolicyConfigError);
  });
});

describe('real connections (127.0.0.1 only)', () => {
  let server: Server;
  let port: number;
  const received: string[] = [];
  const agents: Agent[] = [];

  /** A safety net around the policy's lookup: fail the test rather than connect past 127.0.0.1. */
  const loopbackOnly = (lookup: LookupFunction): LookupFunction => (hostname, options, callback) => {
    lookup(hostname, options, (err, address, family) => {
      const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
      if (err === null && addresses.some((a) => a !== '127.0.0.1')) {
        callback(new Error(`test guard: refusing to connect to ${addresses.join(', ')}`), '');
        return;
      }
      callback(err, address, family);
    });
  };

  const agent = (connect: ConstructorParameters<typeof Agent>[0]): Agent => {
    const created = new Agent(connect);
    agents.push(created);
    return created;
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      received.push(`${req.method} ${req.headers.host}`);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.close()));
    await new Promise<void>((done) => server.close(() => done()));
  });

  const resolver = fakeResolver({ 'evil.test': [v4('10.1.2.3')] });
  let policy: DestinationPolicy;
  beforeAll(() => {
    policy = createDestinationPolicy({ allowInsecure: true, nodeEnv: 'test', resolve: resolver });
  });

  const post = (url: string, dispatcher: Agent) =>
    request(url, {
      method: 'POST',
      body: '{"type":"webhook.test"}',
      headers: { 'content-type': 'application/json' },
      dispatcher,
    });

  it('POSTs to localhost through the policy lookup', async () => {
    const res = await post(`http://localhost:${port}/`, agent({ connect: { lookup: loopbackOnly(policy.lookup) } }));
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('ok');
    expect(received).toContain(`POST localhost:${port}`);
  });

  it('fails with EDESTINATION before connecting when the name resolves to a private address', async () => {
    const before = received.length;
    const err = await post(`http://evil.test:${port}/`, agent({ connect: { lookup: loopbackOnly(policy.lookup) } })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DestinationRefusedError);
    expectRule(err as DestinationRefusedError, 'private-address');
    expect(resolver.calls).toContain('evil.test');
    expect(received.length).toBe(before);
  });

  describe('guarded connector', () => {
    const baseCalls: string[] = [];
    const base = (): buildConnector.connector => {
      const real = buildConnector({ lookup: loopbackOnly(policy.lookup) });
      return (options, callback) => {
        baseCalls.push(options.hostname);
        if (options.hostname !== 'localhost' && options.hostname !== '127.0.0.1') {
          callback(new Error(`test guard: base connector reached for ${options.hostname}`), null);
          return;
        }
        real(options, callback);
      };
    };

    it('connects to an allowed origin', async () => {
      const dispatcher = agent({ connect: createGuardedConnector(policy, { base: base() }) });
      const res = await post(`http://127.0.0.1:${port}/`, dispatcher);
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    });

    it.each([
      ['http://10.0.0.1:%PORT%/', 'private-address'],
      ['http://169.254.169.254/', 'link-local-address'],
      ['http://[::ffff:10.0.0.1]:%PORT%/', 'private-address'],
      ['http://[::1]:%PORT%/', 'ipv6-not-supported'],
    ] as const)('refuses the IP literal %s (which skips lookup) before any socket: %s', async (url, rule) => {
      baseCalls.length = 0;
      const dispatcher = agent({ connect: createGuardedConnector(policy, { base: base() }) });
      const err = await post(url.replace('%PORT%', String(port)), dispatcher).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DestinationRefusedError);
      expectRule(err as DestinationRefusedError, rule);
      expect(baseCalls).toEqual([]);
    });

    it('applies the scheme and port rules of a strict policy', async () => {
      baseCalls.length = 0;
      const strict = createDestinationPolicy({ resolve: fakeResolver({}) });
      const dispatcher = agent({ connect: createGuardedConnector(strict, { base: base() }) });
      for (const [url, rule] of [
        [`http://localhost:${port}/`, 'https-required'],
        [`https://localhost:${port}/`, 'port-443-required'],
        ['https://localhost/', 'loopback-address'],
      ] as const) {
        const err = await post(url, dispatcher).then(
          () => null,
          (e: unknown) => e,
        );
        expectRule(err as DestinationRefusedError, rule);
      }
      expect(baseCalls).toEqual([]);
    });
  });
});
