// The fan-out's delivery ids (issue 68): the event's delivery id goes to the first endpoint by
// id; every other one gets an id derived from it and the endpoint's, so one statement can write
// them all (store/fan-out.ts writes the same rule in SQL) and an id is never reused: ids stay
// `dlv_` + 26 Crockford letters, time first, and 16 hexadecimal capitals are in the Crockford
// alphabet.
import { createHash } from 'node:crypto';

/** `dlv_` and the 10 letters of time that a derived id keeps. */
export const FAN_OUT_ID_HEAD = 14;

/** The delivery id of the event's delivery `id` to the endpoint ranked `rank` (1 = first by endpoint id). */
export function fanOutDeliveryId(id: string, endpointId: string, rank: number): string {
  if (rank === 1) return id;
  return id.slice(0, FAN_OUT_ID_HEAD) + createHash('md5').update(id + endpointId).digest('hex').slice(0, 16).toUpperCase();
}
