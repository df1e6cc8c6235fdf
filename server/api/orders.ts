// Handlers of spec/orders.openapi.yaml: the v2 order API. The router has authenticated,
// authorized (orders_read / orders_write) and validated the request against the spec.
import type { operations } from '../../generated/types/orders.ts';
import { listOrderEvents } from '../domain/orders/feed.ts';
import { createOrder, getOrder, listOrderPayments } from '../domain/orders/orders.ts';
import { openEventStream } from '../domain/orders/stream.ts';
import type { EventType } from '../domain/model.ts';
import { SSE_HEADERS, sseBody, StreamedReply } from '../http/event-stream.ts';
import type { HandlersFor } from '../http/handler-types.ts';
import { presentOrder, presentPaymentList } from './present/orders.ts';

export const ordersHandlers: HandlersFor<operations> = {
  async createOrder({ body, headers }, { services, scope }) {
    const view = await createOrder(services, scope, body, headers['idempotency-key']);
    const location = { Location: `/v2/orders/${view.order.id}` };
    return { status: 201, body: presentOrder(view), headers: view.replayed ? { ...location, 'Idempotent-Replayed': 'true' } : location };
  },

  async getOrder({ path }, { services, scope }) {
    return { status: 200, body: presentOrder(await getOrder(services, scope, path.orderId)) };
  },

  async listOrderPayments({ path }, { services, scope }) {
    return { status: 200, body: presentPaymentList(await listOrderPayments(services, scope, path.orderId)) };
  },

  async listEvents({ query }, { services, scope }) {
    // The router filled in the documented default limit (20).
    const page = await listOrderEvents(services, scope, {
      limit: query.limit ?? 20,
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      ...(query.type !== undefined ? { type: query.type } : {}),
    });
    return { status: 200, body: { data: page.events, nextCursor: page.nextCursor } };
  },

  async streamEvents({ query, headers }, { services, scope, streams }) {
    // Ends when the client goes away (the body is cancelled) or the server stops.
    const stop = new AbortController();
    const fromHeader = headers['last-event-id'];
    const opened = await openEventStream(services, scope, {
      cursor: fromHeader ?? query.after ?? null,
      cursorPointer: fromHeader !== undefined ? '/header/last-event-id' : '/query/after',
      // The router validated the list against the spec's pattern of event types.
      types: query.types !== undefined ? (query.types.split(',') as EventType[]) : [],
      signal: AbortSignal.any([stop.signal, streams.shutdown]),
      pollMs: streams.pollMs,
      timers: streams.timers,
    });
    const body = sseBody(opened, stop, services.clock, streams.heartbeatMs);
    return { status: 200, body: new StreamedReply(new Response(body, { status: 200, headers: SSE_HEADERS })) };
  },
};
