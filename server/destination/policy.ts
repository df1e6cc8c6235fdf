/**
 * The webhook / `notifyUrl` destination policy: one set of rules, checked when a URL is saved
 * (`checkUrl`) and again at connect time against the resolved address (`resolve`, `lookup`).
 *
 * Rules (PRODUCT.md): `https` only, port 443 only, no user info, no fragment, and a public IPv4
 * address: no loopback, private, link-local, CGNAT, multicast or reserved address, nor an
 * IPv4-mapped/compatible IPv6 form of one; IPv6 literals and names that resolve only to IPv6 are
 * `ipv6-not-supported`. The development setting `allowInsecure` (`WEBHOOK_ALLOW_INSECURE_URLS=true`)
 * lifts the scheme and port rules and allows loopback addresses only; it is refused when
 * `NODE_ENV=production`.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIPv4 } from 'node:net';
import { classifyAddress, classifyIPv4, embeddedIPv4, parseIPv6 } from './address.ts';
import { createCheckedLookup } from './lookup.ts';
import { DestinationRefusedError } from './rules.ts';
import type { AddressRule, DestinationRule } from './rules.ts';

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

export interface DestinationPolicyOptions {
  /** Development only: allow `http`, any port and loopback addresses. Default false. */
  allowInsecure?: boolean;
  /** Defaults to `process.env.NODE_ENV`; `production` refuses `allowInsecure`. */
  nodeEnv?: string;
  /** Resolves a host name; defaults to `dns.promises.lookup(host, { all: true, order: 'verbatim' })`. */
  resolve?: Resolver;
}

/** A URL that passed the save-time checks. Store and send to `href` (the normalized form). */
export interface CheckedUrl {
  readonly href: string;
  readonly protocol: 'https:' | 'http:';
  /** Lower-case host name or dotted IPv4 address, as the URL parser normalized it. */
  readonly hostname: string;
  /** The effective port (443 for https unless `allowInsecure`). */
  readonly port: number;
  readonly hostKind: 'ipv4' | 'name';
}

/** A connect-time check result: connect to `address` (never re-resolve `url.hostname`). */
export interface ResolvedDestination {
  readonly url: CheckedUrl;
  readonly address: string;
  readonly family: 4;
  readonly port: number;
}

export interface DestinationPolicy {
  readonly allowInsecure: boolean;
  /** Save-time checks, no DNS. Throws `DestinationRefusedError`. */
  checkUrl(raw: string): CheckedUrl;
  /** Connect-time check: re-checks the URL, resolves it and checks every address in the answer. */
  resolve(url: CheckedUrl | string): Promise<ResolvedDestination>;
  /** Resolves a bare host name (or IP literal) to one checked IPv4 address. */
  resolveHost(hostname: string): Promise<string>;
  /** For `net.connect` / undici `connect: { lookup }`: connects only to the checked address. */
  readonly lookup: LookupFunction;
}

/** The policy was configured in a way that is never allowed (insecure URLs in production). */
export class DestinationPolicyConfigError extends Error {
  override readonly name = 'DestinationPolicyConfigError';
  readonly code = 'ERR_DESTINATION_POLICY_CONFIG';
}

export const defaultResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

const ADDRESS_KIND: Readonly<Record<Exclude<AddressRule, 'ipv6-not-supported'>, string>> = {
  'loopback-address': 'a loopback address (this server itself)',
  'private-address': 'a private network address',
  'link-local-address': 'a link-local address',
  'cgnat-address': 'a carrier-grade NAT (shared) address',
  'multicast-address': 'a multicast address',
  'reserved-address': 'a reserved or special-purpose address',
};

const PUBLIC_IPV4 = 'the URL must point to a public IPv4 address';

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

export function createDestinationPolicy(options: DestinationPolicyOptions = {}): DestinationPolicy {
  const allowInsecure = options.allowInsecure === true;
  const nodeEnv = options.nodeEnv ?? process.env.NODE_ENV;
  if (allowInsecure && nodeEnv === 'production') {
    throw new DestinationPolicyConfigError(
      'WEBHOOK_ALLOW_INSECURE_URLS=true is refused when NODE_ENV=production: insecure webhook URLs are for local development only',
    );
  }
  const resolver = options.resolve ?? defaultResolver;

  const allowed = (rule: DestinationRule): boolean => allowInsecure && rule === 'loopback-address';

  /** Refuses an IP literal host (brackets removed) that breaks a rule; an IPv6 literal is always refused. */
  const checkLiteral = (address: string): void => {
    if (isIPv4(address)) {
      const rule = classifyIPv4(address);
      if (rule !== null && !allowed(rule)) {
        throw new DestinationRefusedError(rule, `${address} is ${ADDRESS_KIND[rule]}; ${PUBLIC_IPV4}`, { address });
      }
      return;
    }
    const embedded = embeddedIPv4(address);
    const rule = embedded === null ? null : classifyIPv4(embedded);
    if (rule !== null && !allowed(rule)) {
      throw new DestinationRefusedError(
        rule,
        `${address} is an IPv6 form of ${embedded}, ${ADDRESS_KIND[rule]}; ${PUBLIC_IPV4}`,
        { address },
      );
    }
    throw new DestinationRefusedError(
      'ipv6-not-supported',
      `IPv6 addresses such as ${address} are not supported; ${PUBLIC_IPV4} or a host name with an IPv4 (A) record`,
      { address },
    );
  };

  const checkUrl = (raw: string): CheckedUrl => {
    if (typeof raw !== 'string' || raw.length === 0) {
      throw new DestinationRefusedError('invalid-url');
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch (cause) {
      throw new DestinationRefusedError(
        'invalid-url',
        'the URL is not a valid absolute URL; expected something like https://example.com/webhooks',
        { cause },
      );
    }

    const protocol = url.protocol;
    if (protocol !== 'https:' && !(allowInsecure && protocol === 'http:')) {
      throw new DestinationRefusedError('https-required', `the URL must use https, not ${protocol.replace(/:$/, '')}`);
    }

    const port = url.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(url.port);
    if (port !== 443 && !allowInsecure) {
      throw new DestinationRefusedError(
        'port-443-required',
        `the URL must use the standard https port 443, not port ${port}; leave the port out`,
      );
    }

    if (url.username !== '' || url.password !== '') {
      throw new DestinationRefusedError(
        'no-credentials',
        'the URL must not contain a user name or password (user:password@); authenticate deliveries with the webhook signature instead',
      );
    }

    // `hash` is empty for a bare trailing "#", so look at the serialization: "#" only ever
    // appears there as the fragment delimiter.
    if (url.href.includes('#')) {
      throw new DestinationRefusedError('no-fragment', 'the URL must not contain a fragment (a part starting with #)');
    }

    let hostname = url.hostname;
    if (hostname === '') {
      throw new DestinationRefusedError('invalid-url', 'the URL has no host name');
    }

    let hostKind: CheckedUrl['hostKind'] = 'name';
    if (hostname.startsWith('[') && hostname.endsWith(']')) {
      checkLiteral(hostname.slice(1, -1)); // always throws: IPv6 is not supported
    } else if (isIPv4(hostname)) {
      checkLiteral(hostname);
      hostKind = 'ipv4';
    } else if (isLocalhostName(hostname) && !allowInsecure) {
      throw new DestinationRefusedError(
        'loopback-address',
        `${hostname} names this server itself (a loopback address); ${PUBLIC_IPV4}`,
      );
    }

    return { href: url.href, protocol, hostname, port, hostKind };
  };

  const resolveHost = async (rawHostname: string): Promise<string> => {
    const hostname = rawHostname.startsWith('[') && rawHostname.endsWith(']') ? rawHostname.slice(1, -1) : rawHostname;
    if (isIPv4(hostname) || parseIPv6(hostname) !== null) {
      checkLiteral(hostname);
      return hostname;
    }
    if (isLocalhostName(hostname)) {
      if (!allowInsecure) {
        throw new DestinationRefusedError(
          'loopback-address',
          `${hostname} names this server itself (a loopback address); ${PUBLIC_IPV4}`,
        );
      }
      // RFC 6761: localhost names are the loopback host; never ask DNS, which may answer ::1 only.
      return '127.0.0.1';
    }

    let answers: Array<{ address: string; family: 4 | 6 }>;
    try {
      answers = await resolver(hostname);
    } catch (cause) {
      throw new DestinationRefusedError('unresolvable-host', `the host name ${hostname} could not be resolved`, {
        cause,
      });
    }
    if (!Array.isArray(answers)) {
      throw new DestinationRefusedError('unresolvable-host', `the host name ${hostname} could not be resolved`);
    }

    // An attacker may control the answer: every address in it must pass, not just the one used.
    const ipv4: string[] = [];
    let ipv6 = 0;
    for (const answer of answers) {
      const address = typeof answer?.address === 'string' ? answer.address : '';
      let rule: AddressRule | null;
      try {
        rule = classifyAddress(address);
      } catch (cause) {
        throw new DestinationRefusedError(
          'unresolvable-host',
          `the host name ${hostname} did not resolve to valid addresses`,
          { cause },
        );
      }
      if (rule !== null && rule !== 'ipv6-not-supported' && !allowed(rule)) {
        throw new DestinationRefusedError(
          rule,
          `the host name ${hostname} resolves to ${ADDRESS_KIND[rule]}; it must resolve only to public IPv4 addresses`,
          { address },
        );
      }
      if (isIPv4(address)) ipv4.push(address);
      else ipv6 += 1; // IPv6 (mapped public ones included) is never connected to
    }

    const first = ipv4[0];
    if (first === undefined) {
      if (ipv6 > 0) {
        throw new DestinationRefusedError(
          'ipv6-not-supported',
          `the host name ${hostname} has only IPv6 addresses; it needs a public IPv4 (A) record`,
        );
      }
      throw new DestinationRefusedError('unresolvable-host', `the host name ${hostname} has no addresses`);
    }
    return first;
  };

  const resolve = async (url: CheckedUrl | string): Promise<ResolvedDestination> => {
    // Re-check: the URL may have been saved under other rules, or be a plain stored string.
    const checked = checkUrl(typeof url === 'string' ? url : url.href);
    const address = await resolveHost(checked.hostname);
    return { url: checked, address, family: 4, port: checked.port };
  };

  return {
    allowInsecure,
    checkUrl,
    resolve,
    resolveHost,
    lookup: createCheckedLookup(resolveHost),
  };
}

/**
 * The policy configured from the environment: `WEBHOOK_ALLOW_INSECURE_URLS` (`true` enables the
 * development setting; unset, empty or `false` leave it off; anything else is a configuration
 * error) and `NODE_ENV`.
 */
export function createDestinationPolicyFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
  resolve?: Resolver,
): DestinationPolicy {
  const setting = env.WEBHOOK_ALLOW_INSECURE_URLS;
  if (setting !== undefined && setting !== '' && setting !== 'true' && setting !== 'false') {
    throw new DestinationPolicyConfigError(
      `WEBHOOK_ALLOW_INSECURE_URLS must be "true" or "false", got ${JSON.stringify(setting)}`,
    );
  }
  const options: DestinationPolicyOptions = { allowInsecure: setting === 'true' };
  if (env.NODE_ENV !== undefined) options.nodeEnv = env.NODE_ENV;
  if (resolve !== undefined) options.resolve = resolve;
  return createDestinationPolicy(options);
}
