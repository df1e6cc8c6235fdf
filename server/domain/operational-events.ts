// Operational events (issue 69): webhook_endpoint.failing, .disabled and .recovered, about one
// endpoint's health. Each is recorded like an order event (the feed and the stream list it) and
// gets one delivery per other active endpoint of the environment whose
// eventTypes name its type: never the endpoint it is about (it is failing), and never an endpoint
// of every type (eventTypes null receives the order events only). Delivery ids follow the
// fan-out's rule (model.ts fanOutDeliveryId). Their kind is `order_event`, "an event of the
// feed to an endpoint" (spec: DeliveryKind): a kind of their own would need SQLite's deliveries
// table rebuilt for its CHECK, a contract migration, for no behaviour that differs.
import type { components } from '../../generated/types/events.ts';
import type { Clock } from './clock.ts';
import type { Tx } from './store.ts';
import { fanOutDeliveryId, type EndpointRecord, type EventRecord, type Millis, type OperationalEventType } from './model.ts';
import { API_VERSION, newDelivery } from './events.ts';
import { newDeliveryId, newEventId } from './ids.ts';
import { isoTime } from './iso-time.ts';

type Events = components['schemas'];
export type OperationalEvent = Events['WebhookEndpointFailingEvent'] | Events['WebhookEndpointDisabledEvent'] | Events['WebhookEndpointRecoveredEvent'];

/** An event's data in epoch milliseconds, without the environment (the recorder adds it). */
export interface OperationalData {
  endpointId: string;
  url: string;
  failingSince: Millis;
  consecutiveFailures: number;
  lastStatusCode?: number;
  reason?: 'gone' | 'failing';
  disabledAt?: Millis;
  recoveredAt?: Millis;
}

/** The envelope, keys in the schema's order (they are the signed bytes). */
export function operationalEventBody(id: string, type: OperationalEventType, createdAt: Millis, environment: 'test' | 'live', d: OperationalData): OperationalEvent {
  const base = {
    endpointId: d.endpointId,
    environment,
    url: d.url,
    failingSince: isoTime(d.failingSince),
    consecutiveFailures: d.consecutiveFailures,
    ...(d.lastStatusCode === undefined ? {} : { lastStatusCode: d.lastStatusCode }),
  };
  const at = isoTime(createdAt);
  switch (type) {
    case 'webhook_endpoint.failing':
      return { id, type, apiVersion: API_VERSION, createdAt: at, data: base };
    case 'webhook_endpoint.disabled':
      return { id, type, apiVersion: API_VERSION, createdAt: at, data: { ...base, reason: d.reason ?? 'failing', disabledAt: isoTime(d.disabledAt ?? createdAt) } };
    case 'webhook_endpoint.recovered':
      return { id, type, apiVersion: API_VERSION, createdAt: at, data: { ...base, recoveredAt: isoTime(d.recoveredAt ?? createdAt) } };
  }
}

/** Records the event about `subject` and its deliveries to the endpoints that subscribe to it; answers the event. */
export async function recordOperationalEvent(tx: Tx, clock: Clock, subject: EndpointRecord, type: OperationalEventType, data: OperationalData): Promise<EventRecord> {
  const env = await tx.tenants.getEnvironment(subject.environmentId);
  if (!env) throw new Error(`environment ${subject.environmentId} of endpoint ${subject.id} vanished`);
  const createdAt = clock.now();
  const id = newEventId(createdAt);
  const event: EventRecord = {
    id,
    environmentId: subject.environmentId,
    type,
    payload: JSON.stringify(operationalEventBody(id, type, createdAt, env.name, data)),
    orderId: null,
    merchantReference: null,
    transactionId: null,
    createdAt,
  };
  await tx.events.insert(event);
  const to = (await tx.endpoints.listActive(subject.environmentId))
    .filter((e) => e.id !== subject.id && e.eventTypes !== null && e.eventTypes.includes(type))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const first = newDeliveryId(createdAt);
  for (const [i, e] of to.entries()) {
    const d = newDelivery(event, 'order_event');
    await tx.deliveries.insert({ ...d, id: fanOutDeliveryId(first, e.id, i + 1), endpointId: e.id, endpointVersion: e.version, url: e.url });
  }
  return event;
}
