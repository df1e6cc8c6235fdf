// The order an event is about, as `trigger` and the merchant's dashboard name it: its number
// (ORD-000042). Events carry the order's id only, so the number is read once per order
// (GET /v2/orders/{orderId}, which the stream's orders_read permits) and remembered.
import { createOrdersClient } from '../api.ts';
import type { Connection } from './args.ts';

/** Orders remembered; a session sees few, this only bounds a long one. */
const REMEMBERED = 1000;

/** The label of an event body: the order number, the order id's start when it cannot be read, the endpoint of an operational event, '-' otherwise. */
export function createOrderLabels(connection: Connection, fetchImpl?: typeof fetch): (body: string) => Promise<string> {
  const orders = createOrdersClient({ baseUrl: connection.baseUrl, apiKey: connection.apiKey, apiHash: connection.apiSecret, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  const numbers = new Map<string, string>();
  return async (body) => {
    const data = (JSON.parse(body) as { data?: { orderId?: unknown; endpointId?: unknown; reason?: unknown } }).data;
    // An operational event (webhook_endpoint.*, issue 69) is about an endpoint: its id, and why when it was disabled.
    if (typeof data?.endpointId === 'string') return typeof data.reason === 'string' ? `${data.endpointId} (${data.reason})` : data.endpointId;
    const orderId = data?.orderId;
    if (typeof orderId !== 'string') return '-';
    const known = numbers.get(orderId);
    if (known) return known;
    const r = await orders.GET('/v2/orders/{orderId}', { params: { path: { orderId } } }).catch(() => null);
    if (!r?.data) return orderId.slice(0, 8);
    if (numbers.size >= REMEMBERED) numbers.delete(numbers.keys().next().value!);
    numbers.set(orderId, r.data.orderNumber);
    return r.data.orderNumber;
  };
}
