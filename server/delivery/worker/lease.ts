// A claimed delivery as the worker holds it: with its destination, worked out once at the claim
// (every part that limits, remembers or refills per destination reads it from here), and the
// one way leases go back to the store before their attempt is recorded.
import type { Logger } from 'pino';
import type { ClaimedDelivery, DeliveryQueue } from '../../domain/store.ts';

export interface Lease extends ClaimedDelivery {
  /** Where it goes: `e:<endpoint id>`, or `u:<url>` for a payout callback (no endpoint). */
  readonly dest: string;
}

export function toLease(c: ClaimedDelivery): Lease {
  const dest = c.delivery.endpointId !== null ? `e:${c.delivery.endpointId}` : `u:${c.delivery.url}`;
  return { delivery: c.delivery, event: c.event, secretEnc: c.secretEnc, signatureScheme: c.signatureScheme, endpointFailures: c.endpointFailures ?? 0, dest, ...(c.maxPerSecond !== undefined ? { maxPerSecond: c.maxPerSecond } : {}) };
}

/**
 * Gives leases back to the store without recording an attempt (the delivery can be claimed
 * again at once). A failure is logged, not thrown: the leases then expire on their own.
 * Resolves true when they were given back.
 */
export type GiveBack = (deliveryIds: readonly string[]) => Promise<boolean>;

export function giveBackTo(queue: Pick<DeliveryQueue, 'release'>, owner: string, log: Logger): GiveBack {
  return async (ids) => {
    if (ids.length === 0) return true;
    try {
      await queue.release(owner, ids);
      return true;
    } catch (err) {
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'could not release leases; they expire on their own');
      return false;
    }
  };
}
