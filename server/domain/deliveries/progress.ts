// The finer label the portal shows next to a delivery's state. `state` says where the delivery
// is in its life; `progress` also says, while it is pending, whether an attempt is in flight
// right now (a live lease), none was made yet in this cycle, or it waits after a failure.
import type { DeliveryRecord, DeliveryState, Millis } from '../model.ts';

export type DeliveryProgress = 'queued' | 'sending' | 'retrying' | Exclude<DeliveryState, 'pending'>;

export function deliveryProgress(d: Pick<DeliveryRecord, 'state' | 'attemptCount' | 'leaseExpiresAt'>, now: Millis): DeliveryProgress {
  if (d.state !== 'pending') return d.state;
  if (d.leaseExpiresAt !== null && d.leaseExpiresAt > now) return 'sending';
  return d.attemptCount === 0 ? 'queued' : 'retrying';
}
