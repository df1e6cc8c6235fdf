// The example receiver over real HTTP on loopback, with a real database file. Only the
// merchant's own dependency, reading the current order, is faked.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import type { ServerType } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateTestHeaders } from '../../webhooks/index.ts';
import { openMerchantStore } from './store.ts';
import type { MerchantStore } from './store.ts';
import { CALLBACK_PATH, WEBHOOK_PATH, createMerchantReceiver, exactDecimalText } from './receiver.ts';
import type { CurrentOrder, FetchOrder, MerchantReceiver } from './receiver.ts';

const SECRET = 'whsec_bWVyY2hhbnQtcmVjZWl2ZXItdGVzdC1zZWNyZXQtMzI';
const PREVIOUS_SECRET = 'whsec_cHJldmlvdXMtcmVjZWl2ZXItdGVzdC1zZWNyZXQtMzI';
const CALLBACK_SECRET = 'whsec_Y2FsbGJhY2stcmVjZWl2ZXItdGVzdC1zZWNyZXQtMzI';
const OTHER_SECRET = 'whsec_bm90LXRoZS1tZXJjaGFudHMtc2VjcmV0LWF0LWFsbC0';

const ORDER_ID = '3f0c9a8e-6b1d-4c2e-9f7a-2d5b8e1c4a90';

let n = 0;
function eventId(): string {
  n += 1;
  return n.toString(16).padStart(64, 'a');
}

function orderEvent(type: string, over: { id?: string; createdAt?: string; status?: string; reviewReason?: string; orderId?: string } = {}) {
  return {
    id: over.id ?? eventId(),
    type,
    apiVersion: 'v2',
    createdAt: over.createdAt ?? '2026-11-22T08:31:07.880Z',
    data: {
      orderId: over.orderId ?? ORDER_ID,
      merchantReference: 'cart-7781',
      amountMinor: 4999,
      currency: 'USD',
      status: over.status ?? (type === 'order.paid' ? 'paid' : type === 'order.created' ? 'open' : 'review_required'),
      assetId: 'USDC',
      networkId: 'ethereum',
      amountBaseUnits: '49990000',
      ...(over.reviewReason ? { reviewReason: over.reviewReason } : {}),
    },
  };
}

interface Harness {
  url: string;
  store: MerchantStore;
  receiver: MerchantReceiver;
  fetchOrder: ReturnType<typeof vi.fn<FetchOrder>>;
  post(path: string, body: string, headers: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }>;
  deliver(event: object, opts?: { secret?: string; timestamp?: number; path?: string; eventId?: string }): Promise<{ status: number; json: Record<string, unknown> }>;
}

let dir: string;
let server: ServerType | undefined;
let h: Harness;

async function start(fetchOrderImpl: FetchOrder, now?: () => number): Promise<Harness> {
  const store = openMerchantStore(join(dir, 'merchant.db'));
  const fetchOrder = vi.fn<FetchOrder>(fetchOrderImpl);
  const receiver = createMerchantReceiver({ secrets: [SECRET, PREVIOUS_SECRET], callbackSecrets: CALLBACK_SECRET, store, fetchOrder, ...(now ? { now } : {}) });
  const port = await new Promise<number>((resolve) => {
    server = serve({ fetch: receiver.app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(info.port));
  });
  const base = `http://127.0.0.1:${port}`;
  const post: Harness['post'] = async (path, body, headers) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  return {
    url: base,
    store,
    receiver,
    fetchOrder,
    post,
    deliver(event, opts = {}) {
      const payload = JSON.stringify(event);
      const headers = generateTestHeaders({
        payload,
        secret: opts.secret ?? SECRET,
        ...(opts.timestamp !== undefined ? { timestamp: opts.timestamp } : {}),
        ...(opts.eventId !== undefined ? { eventId: opts.eventId } : {}),
      });
      return post(opts.path ?? WEBHOOK_PATH, payload, { ...headers, 'User-Agent': 'PaymentsService-Webhooks/2.0' });
    },
  };
}

const paid = (orderId = ORDER_ID): CurrentOrder => ({ orderId, paymentStatus: 'paid', status: 'open' });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'merchant-receiver-'));
});

afterEach(async () => {
  await h?.receiver.idle();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  h?.store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('example merchant receiver', () => {
  it('answers 2xx to a valid event only after storing it with its business update', async () => {
    h = await start(async (id) => paid(id));
    const event = orderEvent('order.created');
    const res = await h.deliver(event);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ received: true });
    expect(h.store.hasEvent(event.id)).toBe(true);
    expect(h.store.order(ORDER_ID)).toMatchObject({ paymentStatus: 'unpaid', fulfilled: false, merchantReference: 'cart-7781' });
    // order.created is not a payment: nothing is read, nothing fulfilled.
    await h.receiver.idle();
    expect(h.fetchOrder).not.toHaveBeenCalled();
  });

  it('answers 2xx to a duplicate without applying it again', async () => {
    h = await start(async (id) => paid(id));
    const event = orderEvent('order.paid');
    const first = await h.deliver(event);
    await h.receiver.idle();
    const second = await h.deliver(event); // a retry: same id and body, fresh t
    await h.receiver.idle();
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ received: true, duplicate: true });
    expect(h.store.eventCount()).toBe(1);
    expect(h.fetchOrder).toHaveBeenCalledTimes(1);
    expect(h.store.order(ORDER_ID)).toMatchObject({ fulfilled: true, fulfilmentPending: false });
  });

  it('refuses an invalid signature with 400 and stores nothing', async () => {
    h = await start(async (id) => paid(id));
    const event = orderEvent('order.paid');
    const res = await h.deliver(event, { secret: OTHER_SECRET });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('signature_mismatch');
    expect(h.store.eventCount()).toBe(0);
    expect(h.store.order(ORDER_ID)).toBeUndefined();
    expect(h.fetchOrder).not.toHaveBeenCalled();
  });

  it('refuses a body changed after signing, before parsing it', async () => {
    h = await start(async (id) => paid(id));
    const event = orderEvent('order.paid');
    const payload = JSON.stringify(event);
    const headers = generateTestHeaders({ payload, secret: SECRET });
    const res = await h.post(WEBHOOK_PATH, payload.replace('4999', '4998'), headers);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('signature_mismatch');
    expect(h.store.eventCount()).toBe(0);
  });

  it('refuses a stale or future timestamp with 400', async () => {
    // The receiver's clock stands still, so ±301 s is outside the tolerance however slow the run.
    const now = Math.floor(Date.now() / 1000);
    h = await start(async (id) => paid(id), () => now * 1000);
    const stale = await h.deliver(orderEvent('order.paid'), { timestamp: now - 301 });
    const future = await h.deliver(orderEvent('order.paid'), { timestamp: now + 301 });
    expect(stale.status).toBe(400);
    expect(stale.json.error).toBe('timestamp_out_of_tolerance');
    expect(future.status).toBe(400);
    expect(h.store.eventCount()).toBe(0);
  });

  it('refuses a Service-Event-Id that is not the body id', async () => {
    h = await start(async (id) => paid(id));
    const res = await h.deliver(orderEvent('order.paid'), { eventId: 'b'.repeat(64) });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('event_id_mismatch');
    expect(h.store.eventCount()).toBe(0);
  });

  it('accepts the previous secret during a rotation', async () => {
    h = await start(async (id) => paid(id));
    const res = await h.deliver(orderEvent('webhook.test'), { secret: PREVIOUS_SECRET });
    expect(res.status).toBe(200);
  });

  describe('fulfilment reads the current order', () => {
    it('fulfils when the current order is still paid', async () => {
      h = await start(async (id) => paid(id));
      await h.deliver(orderEvent('order.paid'));
      await h.receiver.idle();
      expect(h.fetchOrder).toHaveBeenCalledWith(ORDER_ID);
      expect(h.store.order(ORDER_ID)).toMatchObject({ paymentStatus: 'paid', fulfilled: true, fulfilmentPending: false });
    });

    it('does not fulfil when the snapshot is stale and the order now needs review', async () => {
      h = await start(async (orderId) => ({ orderId, paymentStatus: 'review_required', status: 'open' }));
      await h.deliver(orderEvent('order.paid'));
      await h.receiver.idle();
      expect(h.fetchOrder).toHaveBeenCalledWith(ORDER_ID);
      expect(h.store.order(ORDER_ID)).toMatchObject({ paymentStatus: 'review_required', fulfilled: false, reviewRequired: true });
    });

    it('does not fulfil a cancelled order (404)', async () => {
      h = await start(async () => null);
      await h.deliver(orderEvent('order.paid'));
      await h.receiver.idle();
      expect(h.store.order(ORDER_ID)).toMatchObject({ fulfilled: false, reviewRequired: true, reviewReason: 'order_not_found' });
    });

    it('keeps the fulfilment pending when the orders API fails, and resumes it later', async () => {
      let up = false;
      h = await start(async (id) => {
        if (!up) throw new Error('connect ECONNREFUSED');
        return paid(id);
      });
      const res = await h.deliver(orderEvent('order.paid'));
      expect(res.status).toBe(200); // stored: the delivery is done either way
      await h.receiver.idle();
      expect(h.store.order(ORDER_ID)).toMatchObject({ fulfilled: false, fulfilmentPending: true });
      up = true;
      await h.receiver.resumePendingFulfilment();
      expect(h.store.order(ORDER_ID)).toMatchObject({ fulfilled: true, fulfilmentPending: false });
    });

    it('stops fulfilment on order.payment_review_required, even when a stale read says paid', async () => {
      let release!: (o: CurrentOrder) => void;
      h = await start(() => new Promise<CurrentOrder>((resolve) => (release = resolve)));
      await h.deliver(orderEvent('order.paid', { createdAt: '2026-11-22T08:31:07.880Z' }));
      const review = await h.deliver(orderEvent('order.payment_review_required', { createdAt: '2026-11-22T09:02:44.105Z', reviewReason: 'deposit_revoked' }));
      expect(review.status).toBe(200);
      release(paid()); // the read was made before the review
      await h.receiver.idle();
      expect(h.store.order(ORDER_ID)).toMatchObject({ fulfilled: false, reviewRequired: true, reviewReason: 'deposit_revoked', paymentStatus: 'review_required' });
    });

    it('does not let an older order.paid delivered late resume fulfilment', async () => {
      h = await start(async (id) => paid(id));
      await h.deliver(orderEvent('order.payment_review_required', { createdAt: '2026-11-22T09:02:44.105Z', reviewReason: 'deposit_revoked' }));
      const late = await h.deliver(orderEvent('order.paid', { createdAt: '2026-11-22T08:31:07.880Z' }));
      await h.receiver.idle();
      expect(late.status).toBe(200);
      expect(h.fetchOrder).not.toHaveBeenCalled();
      expect(h.store.order(ORDER_ID)).toMatchObject({ fulfilled: false, reviewRequired: true });
    });
  });

  it('stores the payout-completed callback once, with the exact amount', async () => {
    h = await start(async (id) => paid(id));
    const body = { transactionId: 'txn_01JD4W9Q6S2V5K8X3M7N0PBRT4', thirdPartyId: 'merchant-payout-2026-000183', amount: 150.25, status: 'success' };
    const id = 'c'.repeat(64);
    const first = await h.deliver(body, { secret: CALLBACK_SECRET, path: CALLBACK_PATH, eventId: id });
    const again = await h.deliver(body, { secret: CALLBACK_SECRET, path: CALLBACK_PATH, eventId: id });
    const wrongSecret = await h.deliver(body, { secret: SECRET, path: CALLBACK_PATH, eventId: 'd'.repeat(64) });
    expect(first.status).toBe(200);
    expect(again.json).toEqual({ received: true, duplicate: true });
    expect(wrongSecret.status).toBe(400);
    expect(h.store.payout(body.transactionId)).toEqual({ ...body, amount: '150.25', eventId: id });
  });

  it('writes amounts as exact decimal text', () => {
    expect(exactDecimalText(150.25)).toBe('150.25');
    expect(exactDecimalText(0.1)).toBe('0.1');
    expect(exactDecimalText(0.00000001)).toBe('0.00000001');
    expect(exactDecimalText(0.00000015)).toBe('0.00000015');
    expect(exactDecimalText(999999999999.999)).toBe('999999999999.999');
    expect(exactDecimalText(1234567.12345678)).toBe('1234567.12345678');
  });
});
