/**
 * A `lookup` for `net.connect` / `tls.connect` / undici's `connect: { lookup }` that hands the
 * socket only an address the destination policy has checked.
 *
 * The name is resolved once, every address in the answer is checked, and the socket connects to
 * the checked address itself: a DNS answer that changes between the check and the connection
 * (DNS rebinding) cannot reach a private address. A refusal is passed to the callback as the
 * `DestinationRefusedError` (`code === 'EDESTINATION'`), so the sender can record the attempt as
 * `destination_not_allowed` without any packet having left this machine.
 *
 * Note: Node does not call `lookup` for IP-literal hosts; use `createGuardedConnector`
 * (connector.ts), which also checks literals, scheme and port, or check the URL first.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { DestinationRefusedError } from './rules.ts';

/** Resolves a host name to one checked IPv4 address, or rejects with a `DestinationRefusedError`. */
export type CheckedHostResolver = (hostname: string) => Promise<string>;

type ErrorCallback = (err: NodeJS.ErrnoException) => void;

export function createCheckedLookup(resolveHost: CheckedHostResolver): LookupFunction {
  return (hostname, options, callback) => {
    const opts: LookupOptions = typeof options === 'object' && options !== null ? options : {};
    const fail = (err: unknown): void => {
      const error = err instanceof Error ? err : new Error(String(err));
      process.nextTick(() => (callback as ErrorCallback)(error));
    };

    if (opts.family === 6 || opts.family === 'IPv6') {
      fail(
        new DestinationRefusedError(
          'ipv6-not-supported',
          'IPv6 connections are not supported; the destination must be a public IPv4 address',
        ),
      );
      return;
    }

    let pending: Promise<string>;
    try {
      pending = resolveHost(hostname);
    } catch (err) {
      fail(err);
      return;
    }
    pending.then(
      (address) => {
        process.nextTick(() => {
          if (opts.all === true) {
            const addresses: LookupAddress[] = [{ address, family: 4 }];
            callback(null, addresses);
          } else {
            callback(null, address, 4);
          }
        });
      },
      fail,
    );
  };
}
