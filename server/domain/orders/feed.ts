// The events feed (GET /v2/events): every order event of the tenant environment, newest
// first, whether or not a delivery was made — the merchant's recovery path. Each item is the
// exact envelope that was (or would have been) signed and sent.
import { InvalidCursorError } from '../store-errors.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { ORDER_EVENT_TYPES, type OrderEventType } from '../model.ts';
import type { OrderEvent } from './event-data.ts';

export interface EventFeedQuery {
  limit: number;
  cursor?: string;
  /** Only this type; every order event type when absent. */
  type?: OrderEventType;
}

export interface EventFeedPage {
  events: OrderEvent[];
  nextCursor: string | null;
}

export async function listOrderEvents(services: Services, scope: Scope, q: EventFeedQuery): Promise<EventFeedPage> {
  const types = q.type ? [q.type] : ORDER_EVENT_TYPES;
  try {
    const page = await services.store.read((tx) =>
      tx.events.list(scope.environmentId, { types, limit: q.limit, cursor: q.cursor ?? null }),
    );
    // The stored payload is the envelope itself, written by recordOrderEvent.
    return { events: page.items.map((e) => JSON.parse(e.payload) as OrderEvent), nextCursor: page.nextCursor };
  } catch (e) {
    if (e instanceof InvalidCursorError) {
      throw new AppError('validation-failed', 'The query is invalid: /query/cursor is not a cursor issued by GET /v2/events.', {
        errors: [{ pointer: '/query/cursor', detail: 'is not a valid cursor' }],
      });
    }
    throw e;
  }
}
