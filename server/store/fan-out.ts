// The fan-out of an event to the active endpoints whose types include it (issue 68): which
// endpoints take it, and each delivery's id. The event's delivery id goes to the first of those
// endpoints by id; every other one gets an id derived from it and the endpoint's, the same in
// JavaScript and in SQL, so one statement can write them all (PostgreSQL) and an id is never
// reused: ids stay `dlv_` + 26 Crockford letters, time first, and 16 hexadecimal capitals are in
// the Crockford alphabet.
import { createHash } from 'node:crypto';

/** `dlv_` and the 10 letters of time that a derived id keeps. */
const HEAD = 14;

/** The delivery id of the event's delivery `id` to the endpoint ranked `rank` (1 = first by endpoint id). */
export function fanOutDeliveryId(id: string, endpointId: string, rank: number): string {
  if (rank === 1) return id;
  return id.slice(0, HEAD) + createHash('md5').update(id + endpointId).digest('hex').slice(0, 16).toUpperCase();
}

/** fanOutDeliveryId as SQL over the expressions of the delivery id, the endpoint id and its rank. */
export function fanOutDeliveryIdSql(id: string, endpointId: string, rank: string): string {
  return `CASE WHEN ${rank} = 1 THEN ${id} ELSE left(${id}, ${HEAD}) || upper(substr(md5(${id} || ${endpointId}), 1, 16)) END`;
}
