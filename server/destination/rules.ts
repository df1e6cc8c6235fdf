/**
 * The webhook / `notifyUrl` destination rules and the error that names a broken one.
 *
 * The rule strings are the `DestinationRule` enum of `spec/common/schemas.yaml`, through
 * generated/. A refusal surfaces as a `destination-not-allowed`
 * problem (400) whose `rule` is `error.rule` when a URL is saved, and as a
 * `destination_not_allowed` attempt (recognised by `code === 'EDESTINATION'`) at send time.
 */
import { destinationRuleValues, type components } from '../../generated/types/management.ts';

export const DESTINATION_RULES: readonly DestinationRule[] = destinationRuleValues;

export type DestinationRule = components['schemas']['DestinationRule'];

/** The rules that an IP address (literal or resolved) can break. */
export type AddressRule = Extract<
  DestinationRule,
  | 'loopback-address'
  | 'private-address'
  | 'link-local-address'
  | 'cgnat-address'
  | 'multicast-address'
  | 'reserved-address'
  | 'ipv6-not-supported'
>;

/** `code` of every refusal, so network-layer callers (undici, net) can tell it from a socket error. */
export const DESTINATION_REFUSED_CODE = 'EDESTINATION';

/** What each rule asks of the URL, in the merchant's words (used when no more specific detail is given). */
export const RULE_REQUIREMENTS: Readonly<Record<DestinationRule, string>> = {
  'invalid-url': 'the URL must be a valid absolute URL such as https://example.com/webhooks',
  'https-required': 'the URL must use https',
  'port-443-required': 'the URL must use the standard https port 443 (leave the port out)',
  'no-credentials': 'the URL must not contain a user name or password (user:password@)',
  'no-fragment': 'the URL must not contain a fragment (a part starting with #)',
  'loopback-address': 'the URL must not point to a loopback address such as localhost or 127.0.0.1',
  'private-address': 'the URL must not point to a private network address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)',
  'link-local-address': 'the URL must not point to a link-local address (169.254.0.0/16)',
  'cgnat-address': 'the URL must not point to a carrier-grade NAT address (100.64.0.0/10)',
  'multicast-address': 'the URL must not point to a multicast address (224.0.0.0/4)',
  'reserved-address': 'the URL must not point to a reserved or special-purpose address',
  'ipv6-not-supported': 'the URL must point to a public IPv4 address; IPv6 destinations are not supported',
  'unresolvable-host': 'the host name of the URL must resolve to a public IPv4 address',
};

export interface DestinationRefusedOptions {
  /** The offending IP address, for logs. Never put it in a merchant-facing text when it came from DNS. */
  address?: string;
  cause?: unknown;
}

/**
 * A destination broke a rule. `message` is `<rule>: <detail>`; `detail` is a sentence for the
 * merchant (suitable for a problem's `detail`); `rule` is the `DestinationRule`.
 */
export class DestinationRefusedError extends Error {
  override readonly name = 'DestinationRefusedError';
  readonly code = DESTINATION_REFUSED_CODE;
  readonly rule: DestinationRule;
  readonly detail: string;
  readonly address: string | undefined;

  constructor(rule: DestinationRule, detail: string = RULE_REQUIREMENTS[rule], options: DestinationRefusedOptions = {}) {
    super(`${rule}: ${detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.rule = rule;
    this.detail = detail;
    this.address = options.address;
  }
}

export function isDestinationRefusedError(value: unknown): value is DestinationRefusedError {
  return (
    value instanceof DestinationRefusedError ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { code?: unknown }).code === DESTINATION_REFUSED_CODE &&
      typeof (value as { rule?: unknown }).rule === 'string' &&
      (DESTINATION_RULES as readonly string[]).includes((value as { rule: string }).rule))
  );
}
