// The fan-out of an event to the active endpoints whose types include it (issue 68): which
// endpoints take it, and each delivery's id, by the domain's rule (domain/model.ts) written
// here in SQL too, the same in both, so one statement can write them all (PostgreSQL).
import { FAN_OUT_ID_HEAD, fanOutDeliveryId } from '../domain/model.ts';

export { fanOutDeliveryId };

/** fanOutDeliveryId as SQL over the expressions of the delivery id, the endpoint id and its rank. */
export function fanOutDeliveryIdSql(id: string, endpointId: string, rank: string): string {
  return `CASE WHEN ${rank} = 1 THEN ${id} ELSE left(${id}, ${FAN_OUT_ID_HEAD}) || upper(substr(md5(${id} || ${endpointId}), 1, 16)) END`;
}
