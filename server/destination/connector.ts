/**
 * An undici connector that applies the destination policy at connect time, before any socket
 * exists: the origin's scheme, port and IP-literal host are checked (Node never calls `lookup`
 * for IP literals), and host names go through the policy's `lookup`, so the socket connects to
 * the checked address only.
 *
 *   const agent = new Agent({ connect: createGuardedConnector(policy, { timeout: 10_000 }) });
 *
 * A refusal fails the request with the `DestinationRefusedError` (`code === 'EDESTINATION'`).
 */
import { buildConnector } from 'undici';
import type { DestinationPolicy } from './policy.ts';

export interface GuardedConnectorOptions {
  /** Options for undici's `buildConnector` (timeout, TLS options...); `lookup` is always the policy's. */
  connect?: buildConnector.BuildOptions;
  /** The connector to guard; defaults to `buildConnector({ ...connect, lookup: policy.lookup })`. */
  base?: buildConnector.connector;
}

export function createGuardedConnector(
  policy: DestinationPolicy,
  options: GuardedConnectorOptions = {},
): buildConnector.connector {
  const base = options.base ?? buildConnector({ ...options.connect, lookup: policy.lookup });
  return (connectOptions, callback) => {
    try {
      // `host` keeps the brackets of an IPv6 literal and any explicit port.
      const { hostname, port } = connectOptions;
      const name = hostname.includes(':') ? `[${hostname}]` : hostname;
      const host = connectOptions.host ?? (port ? `${name}:${port}` : name);
      policy.checkUrl(`${connectOptions.protocol}//${host}/`);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      process.nextTick(() => callback(error, null));
      return;
    }
    base(connectOptions, callback);
  };
}
