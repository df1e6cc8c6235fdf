// The events feed (GET /v2/events): every order event of the tenant environment, newest
// first, whether or not a delivery was made — the merchant's recovery path — and the
// operational events about its endpoints (issue 69). Each item is the exact envelope that was
// (or would have been) signed and sent.
import { InvalidCursorError } from '../store-errors.ts';
import type { Scope, Services } from '../context.ts';
import { AppError } from '../errors.ts';
import { FEED_EVENT_TYPES, type FeedEventType } from '../model.ts';
import type { components } from '../../../generated/types/orders.ts';

/** An item of the feed: an order event or an operational event. */
export type FeedEvent = components['schemas']['FeedEvent'];

export interface EventFeedQuery {
  limit: number;
  cursor?: string;
  /** Only this type; every feed type when absent. */
  type?: FeedEventType;
}

export interface EventFeedPage {
  events: FeedEvent[];
  nextCursor: string | null;
}

export async function listOrderEvents(services: Services, scope: Scope, q: EventFeedQuery): Promise<EventFeedPage> {
  const types = q.type ? [q.type] : FEED_EVENT_TYPES;
  try {
    const page = await services.store.read((tx) =>
      tx.events.list(scope.environmentId, { types, limit: q.limit, cursor: q.cursor ?? null }),
    );
    // The stored payload is the envelope itself, written by recordOrderEvent.
    return { events: page.items.map((e) => JSON.parse(e.payload) as FeedEvent), nextCursor: page.nextCursor };
  } catch (e) {
    if (e instanceof InvalidCursorError) {
      throw new AppError('validation-failed', 'The query is invalid: /query/cursor is not a cursor issued by GET /v2/events.', {
        errors: [{ pointer: '/query/cursor', detail: 'is not a valid cursor' }],
      });
    }
    throw e;
  }
}
