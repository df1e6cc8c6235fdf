// Webhook activity: the deliveries of a tenant environment (order events, test webhooks and
// payout-completed callbacks of every endpoint and version), their attempts and payloads, and
// the manual retry of a failed one. Another environment's delivery is as unknown as a made-up id.
import { InvalidCursorError } from '../store-errors.ts';
import type { ReadTx, Tx } from '../store.ts';
import { receives, type AttemptRecord, type DeliveryRecord, type EndpointRecord, type EventType, type Millis } from '../model.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { deliveryProgress, type DeliveryProgress } from './progress.ts';

/** A delivery with what the record alone does not say: its event type, progress and last attempt. */
export interface DeliveryView {
  delivery: DeliveryRecord;
  eventType: EventType;
  progress: DeliveryProgress;
  /** The newest attempt of any cycle; null before the first attempt ends. */
  lastAttempt: AttemptRecord | null;
}

export interface DeliveryDetailView extends DeliveryView {
  /** Every attempt of every cycle, newest first. */
  attempts: AttemptRecord[];
  /** The exact JSON that is signed and sent, parsed. */
  payload: unknown;
}

export interface DeliveryListQuery {
  limit: number;
  cursor?: string;
  /** Exact order id, merchant reference or event id. */
  q?: string;
  /** Only this endpoint's deliveries. */
  endpointId?: string;
}

export interface DeliveryPageView {
  deliveries: DeliveryView[];
  nextCursor: string | null;
}

export function deliveryNotFound(scope: Scope, deliveryId: string): AppError {
  return new AppError('not-found', `No delivery ${deliveryId} exists in the ${scope.environment} environment.`);
}

const newestFirst = (attempts: AttemptRecord[]): AttemptRecord[] =>
  [...attempts].sort((a, b) => b.cycle - a.cycle || b.number - a.number);

/** Test webhooks and payout callbacks have one event type each; an order event's is on its event. */
async function eventTypeOf(tx: ReadTx, d: DeliveryRecord): Promise<EventType> {
  if (d.kind === 'webhook_test') return 'webhook.test';
  if (d.kind === 'payout_callback') return 'payout.completed';
  const event = await tx.events.get(d.environmentId, d.eventId);
  if (!event) throw new Error(`delivery ${d.id} has no event ${d.eventId}`);
  return event.type;
}

export async function deliveryView(tx: ReadTx, d: DeliveryRecord, now: Millis): Promise<DeliveryView> {
  const attempts = newestFirst(await tx.deliveries.attempts(d.id));
  return { delivery: d, eventType: await eventTypeOf(tx, d), progress: deliveryProgress(d, now), lastAttempt: attempts[0] ?? null };
}

/**
 * The current endpoint of an order or test delivery: its own while active (and, for an order
 * event, still receiving its type), else the environment's newest active endpoint that would
 * receive it (a test webhook: any), as the one replacing it; null when there is none.
 */
async function retryTarget(tx: Tx, scope: Scope, d: DeliveryRecord): Promise<EndpointRecord | null> {
  const type = await eventTypeOf(tx, d);
  const takes = (e: EndpointRecord): boolean => e.active && (d.kind !== 'order_event' || receives(e.eventTypes, type));
  const own = d.endpointId === null ? null : await tx.endpoints.get(scope.environmentId, d.endpointId);
  if (own !== null && takes(own)) return own;
  return (await tx.endpoints.listActive(scope.environmentId)).find(takes) ?? null;
}

async function findDelivery(tx: ReadTx, scope: Scope, deliveryId: string): Promise<DeliveryRecord> {
  const d = await tx.deliveries.get(scope.environmentId, deliveryId);
  if (!d) throw deliveryNotFound(scope, deliveryId);
  return d;
}

/** Newest first; `q` is an exact match (no prefix or partial match), no match is an empty page. */
export async function listDeliveries(services: Services, scope: Scope, query: DeliveryListQuery): Promise<DeliveryPageView> {
  try {
    return await services.store.read(async (tx) => {
      const page = await tx.deliveries.list(scope.environmentId, { q: query.q ?? null, limit: query.limit, cursor: query.cursor ?? null, endpointId: query.endpointId ?? null });
      const now = services.clock.now();
      const deliveries: DeliveryView[] = [];
      for (const d of page.items) deliveries.push(await deliveryView(tx, d, now));
      return { deliveries, nextCursor: page.nextCursor };
    });
  } catch (e) {
    if (e instanceof InvalidCursorError) {
      throw new AppError('validation-failed', 'The query is invalid: /query/cursor is not a cursor issued by GET /v2/webhooks/deliveries.', {
        errors: [{ pointer: '/query/cursor', detail: 'is not a valid cursor' }],
      });
    }
    throw e;
  }
}

/** One delivery with every attempt (newest first) and the exact payload that was signed. */
export async function getDelivery(services: Services, scope: Scope, deliveryId: string): Promise<DeliveryDetailView> {
  return services.store.read(async (tx) => {
    const d = await findDelivery(tx, scope, deliveryId);
    const event = await tx.events.get(scope.environmentId, d.eventId);
    if (!event) throw new Error(`delivery ${d.id} has no event ${d.eventId}`);
    const attempts = newestFirst(await tx.deliveries.attempts(d.id));
    return {
      delivery: d,
      eventType: event.type,
      progress: deliveryProgress(d, services.clock.now()),
      lastAttempt: attempts[0] ?? null,
      attempts,
      // The stored text is exactly the body that is signed; parsing it changes nothing the caller sees.
      payload: JSON.parse(event.payload) as unknown,
    };
  });
}

/**
 * Starts a new cycle of a `failed` delivery with its original event id and payload. Order and
 * test events go to the current endpoint (retryTarget; its id, version and url: the worker signs
 * with that endpoint's secret); payout callbacks go to their payout's notifyUrl, signed with the
 * current callback secret, and need no endpoint.
 */
export async function retryDelivery(services: Services, scope: Scope, deliveryId: string): Promise<DeliveryView> {
  return services.store.transaction(async (tx) => {
    const d = await findDelivery(tx, scope, deliveryId);
    if (d.state !== 'failed') {
      throw new AppError('delivery-not-retryable', `Delivery ${d.id} is ${d.state}; only failed deliveries can be retried.`);
    }
    let target: { endpointId: string | null; endpointVersion: number | null; url: string };
    if (d.kind === 'payout_callback') {
      target = { endpointId: null, endpointVersion: null, url: d.url };
    } else {
      const endpoint = await retryTarget(tx, scope, d);
      if (!endpoint) {
        throw new AppError(
          'delivery-not-retryable',
          `The ${scope.environment} environment has no active webhook endpoint for delivery ${d.id}; create one before retrying.`,
        );
      }
      target = { endpointId: endpoint.id, endpointVersion: endpoint.version, url: endpoint.url };
    }
    const now = services.clock.now();
    const restarted = await tx.deliveries.restart({ id: d.id, environmentId: scope.environmentId, ...target, now });
    // Guarded by state = 'failed' in the store: a concurrent retry got there first.
    if (!restarted) throw new AppError('delivery-not-retryable', `Delivery ${d.id} was retried meanwhile; only failed deliveries can be retried.`);
    const after = await findDelivery(tx, scope, d.id);
    return deliveryView(tx, after, now);
  });
}
