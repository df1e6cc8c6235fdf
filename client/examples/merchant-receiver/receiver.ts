// An example merchant receiver for the service's order webhooks and payout-completed
// callbacks, to copy and adapt. The order of the steps is the point (README.md explains each):
//
//   1. read the RAW body (never a parsed body: the signature covers the exact bytes)
//   2. verifyWebhook BEFORE parsing: signature, timestamp within 300 s, Service-Event-Id
//      equal to the body id; any failure answers 400 and nothing is handled
//   3. record the event id and the business update in ONE database transaction
//   4. answer 2xx only after that commit; a duplicate answers 2xx without applying again
//   5. after the commit, for order.paid: read the CURRENT order (GET /v2/orders/{orderId})
//      and fulfil only if it is still paid
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { orderEventTypeValues, type components } from '../../../generated/types/orders.ts';
import { createOrdersClient } from '../../api.ts';
import { isWebhookVerificationError, verifyWebhook } from '../../webhooks/index.ts';
import type { MerchantStore, PaymentStatus } from './store.ts';

/** Where the service posts order webhooks (the URL configured for the endpoint). */
export const WEBHOOK_PATH = '/webhooks/payments';
/** Where the service posts payout-completed callbacks (the payout's notifyUrl). */
export const CALLBACK_PATH = '/payouts/completed';
/** Bodies are a few hundred bytes; refuse anything absurd before reading it. */
const MAX_BODY_BYTES = 256 * 1024;

/** The part of `GET /v2/orders/{orderId}` that fulfilment needs. */
export interface CurrentOrder {
  orderId: string;
  paymentStatus: PaymentStatus;
  /** Lifecycle status (`open`, `cancelled`); it can still read `open` after payment. */
  status: string;
}

/** Reads the current order; `null` when the API answers 404 (unknown or cancelled order). */
export type FetchOrder = (orderId: string) => Promise<CurrentOrder | null>;

export interface OrdersApiOptions {
  /** Base URL of the v2 order API, e.g. https://api.payments.example */
  baseUrl: string;
  /** A key with the `orders_read` permission. */
  apiKey: string;
  apiHash: string;
  fetch?: typeof fetch;
}

export interface MerchantReceiverOptions {
  /** The webhook endpoint's signing secret; during a rotation `[current, previous]`. */
  secrets: string | readonly string[];
  /**
   * The tenant environment's callback secret (payout-completed callbacks); during a
   * rotation `[current, previous]`. Without it the callback route is not mounted.
   */
  callbackSecrets?: string | readonly string[];
  store: MerchantStore;
  /** How to read the current order. Default: the orders API client with `ordersApi`. */
  fetchOrder?: FetchOrder;
  /** Credentials of the orders API, for the default `fetchOrder`. */
  ordersApi?: OrdersApiOptions;
  /** Clock in milliseconds since the Unix epoch, for the timestamp tolerance; default `Date.now`. */
  now?: () => number;
  /** Where to log (default: nothing). Never log secrets, signatures or bodies. */
  log?: (message: string) => void;
}

export interface MerchantReceiver {
  app: Hono;
  /** Resolves when every fulfilment started so far has finished (tests, graceful shutdown). */
  idle(): Promise<void>;
  /** Retries fulfilments left pending (orders API unreachable, crash): call at start-up and periodically. */
  resumePendingFulfilment(): Promise<void>;
}

export function createMerchantReceiver(opts: MerchantReceiverOptions): MerchantReceiver {
  const { store } = opts;
  const log = opts.log ?? (() => {});
  const fetchOrder = opts.fetchOrder ?? (opts.ordersApi ? ordersApiFetchOrder(opts.ordersApi) : undefined);
  if (!fetchOrder) throw new TypeError('createMerchantReceiver needs fetchOrder or ordersApi to read the current order before fulfilment');
  const running = new Set<Promise<void>>();

  /** Step 5, after the commit: read the current order, then decide in a new transaction. */
  function scheduleFulfilment(orderId: string): void {
    const task = (async () => {
      try {
        const current = await fetchOrder!(orderId);
        const outcome = store.completeFulfilment(orderId, current);
        log(`order ${orderId}: fulfilment ${outcome} (paymentStatus ${current?.paymentStatus ?? 'not found'})`);
      } catch (err) {
        // The event is stored and the order stays marked pending: resumePendingFulfilment()
        // tries again later. The delivery itself was answered 2xx and is done.
        log(`order ${orderId}: could not read the current order, fulfilment stays pending (${err instanceof Error ? err.message : String(err)})`);
      }
    })();
    running.add(task);
    void task.finally(() => running.delete(task));
  }

  const app = new Hono();
  const limit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.json({ error: 'body_too_large' }, 413) });

  app.post(WEBHOOK_PATH, limit, async (c) => {
    // 1. The raw bytes, exactly as received.
    const rawBody = new Uint8Array(await c.req.arrayBuffer());
    // 2. Verify before parsing: signature, timestamp, Service-Event-Id = body id.
    let verified;
    try {
      verified = verifyWebhook<unknown>({ rawBody, headers: c.req.raw.headers, secrets: opts.secrets, ...(opts.now ? { now: opts.now } : {}) });
    } catch (err) {
      if (isWebhookVerificationError(err)) return c.json({ error: err.code, message: err.message }, 400);
      throw err;
    }
    const { event, eventId } = verified;
    const parsed = parseOrderWebhook(event);
    if (parsed === 'invalid') return c.json({ error: 'unexpected_payload', message: 'the event does not have the documented shape' }, 400);

    // 3. The event id and the business update in one transaction.
    const outcome = store.recordOnce(eventId, parsed.type, (): string | null => {
      if (parsed.kind === 'other') return null; // webhook.test, and event types added later: recorded, nothing to do
      switch (parsed.type) {
        case 'order.created':
          store.orderCreated(parsed.orderId, parsed.merchantReference, parsed.createdAt);
          return null;
        case 'order.paid':
          return store.orderPaid(parsed.orderId, parsed.merchantReference, parsed.createdAt) ? parsed.orderId : null;
        case 'order.payment_review_required':
          store.orderReviewRequired(parsed.orderId, parsed.merchantReference, parsed.createdAt, parsed.reviewReason);
          return null;
      }
    });
    // 4. Committed: now 2xx. A duplicate is acknowledged without applying it again.
    if (outcome.duplicate) return c.json({ received: true, duplicate: true }, 200);
    // 5. After the commit, never before: read the current order and fulfil if still paid.
    if (outcome.result !== null) scheduleFulfilment(outcome.result);
    return c.json({ received: true }, 200);
  });

  if (opts.callbackSecrets !== undefined) {
    const callbackSecrets = opts.callbackSecrets;
    app.post(CALLBACK_PATH, limit, async (c) => {
      const rawBody = new Uint8Array(await c.req.arrayBuffer());
      let verified;
      try {
        // Signed with the callback secret; the body has no id, Service-Event-Id identifies it.
        verified = verifyWebhook<unknown>({ rawBody, headers: c.req.raw.headers, secrets: callbackSecrets, ...(opts.now ? { now: opts.now } : {}) });
      } catch (err) {
        if (isWebhookVerificationError(err)) return c.json({ error: err.code, message: err.message }, 400);
        throw err;
      }
      const payout = parsePayoutCompleted(verified.event);
      if (!payout) return c.json({ error: 'unexpected_payload', message: 'the notification does not have the documented shape' }, 400);
      const outcome = store.recordOnce(verified.eventId, 'payout.completed', () =>
        store.payoutCompleted({ ...payout, eventId: verified.eventId }),
      );
      return c.json(outcome.duplicate ? { received: true, duplicate: true } : { received: true }, 200);
    });
  }

  return {
    app,
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    async resumePendingFulfilment() {
      for (const orderId of store.pendingFulfilments()) scheduleFulfilment(orderId);
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

/** The default `fetchOrder`: `GET /v2/orders/{orderId}` with the typed orders client. */
export function ordersApiFetchOrder(api: OrdersApiOptions): FetchOrder {
  const client = createOrdersClient({ baseUrl: api.baseUrl, apiKey: api.apiKey, apiHash: api.apiHash, ...(api.fetch ? { fetch: api.fetch } : {}) });
  return async (orderId) => {
    const { data, response } = await client.GET('/v2/orders/{orderId}', { params: { path: { orderId } } });
    if (response.status === 404) return null;
    if (!data) throw new Error(`GET /v2/orders/{orderId} answered ${response.status}`);
    return { orderId: data.orderId, paymentStatus: data.paymentStatus, status: data.status };
  };
}

// ---- the few fields this receiver uses, checked after verification --------------------

type OrderEventType = components['schemas']['OrderEventType'];

type ParsedOrderWebhook =
  | { kind: 'order'; type: OrderEventType; orderId: string; merchantReference: string; createdAt: string; reviewReason: string | null }
  | { kind: 'other'; type: string };

const ORDER_EVENTS: ReadonlySet<string> = new Set<OrderEventType>(orderEventTypeValues);

function parseOrderWebhook(event: unknown): ParsedOrderWebhook | 'invalid' {
  if (!isObject(event)) return 'invalid';
  const type = typeof event.type === 'string' ? event.type : 'unknown';
  if (!ORDER_EVENTS.has(type)) return { kind: 'other', type };
  const data = event.data;
  if (!isObject(data) || typeof data.orderId !== 'string' || typeof event.createdAt !== 'string' || Number.isNaN(Date.parse(event.createdAt))) {
    return 'invalid';
  }
  return {
    kind: 'order',
    type: type as OrderEventType,
    orderId: data.orderId,
    merchantReference: typeof data.merchantReference === 'string' ? data.merchantReference : '',
    createdAt: event.createdAt,
    // Unknown review reasons are still a review.
    reviewReason: typeof data.reviewReason === 'string' ? data.reviewReason : null,
  };
}

function parsePayoutCompleted(event: unknown): { transactionId: string; thirdPartyId: string; amount: string; status: string } | null {
  if (!isObject(event)) return null;
  const { transactionId, thirdPartyId, amount, status } = event;
  if (typeof transactionId !== 'string' || typeof thirdPartyId !== 'string' || typeof amount !== 'number' || typeof status !== 'string') return null;
  return { transactionId, thirdPartyId, amount: exactDecimalText(amount), status };
}

/**
 * The decimal text of an amount that has at most 8 decimal places and 15 significant digits
 * (the contract's bounds). Such a number survives a round trip through a double, so the
 * shortest text that reads back as the same double is the text that was sent; only very
 * small amounts print in exponent form, so those are written out with 8 places.
 */
export function exactDecimalText(amount: number): string {
  const text = String(amount);
  if (!/e/i.test(text)) return text;
  return amount.toFixed(8).replace(/0+$/, '').replace(/\.$/, '');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
