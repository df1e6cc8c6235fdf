// Shared by the order API tests (server/api/orders*.test.ts, sandbox-orders.test.ts): orders
// and deposits through the typed clients, the events feed, a receiver, and the store rows
// behind them. Keys and scopes come from the harness (server.keyWith, server.environmentId).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { components } from '../../../generated/types/orders.ts';
import { createEndpoint } from '../../domain/endpoints/endpoints.ts';
import type { DeliveryRecord, EndpointRecord } from '../../domain/model.ts';
import type { TestServer } from '../../testing/harness.ts';

export type Order = components['schemas']['Order'];
export type OrderPayment = components['schemas']['OrderPayment'];
export type OrderEvent = components['schemas']['OrderEvent'];
export type FeedEvent = components['schemas']['FeedEvent'];

/** The order events of a feed page (the feed also lists operational events, issue 69). */
export function orderEventsOf(items: readonly FeedEvent[]): OrderEvent[] {
  return items.filter((e): e is OrderEvent => e.type.startsWith('order.'));
}
export type CreateOrderRequest = components['schemas']['CreateOrderRequest'];
export type Clients = ReturnType<TestServer['clientsFor']>;

export const HEX64 = /^[0-9a-f]{64}$/;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Order ids are UUIDs of version 7 (ids.ts). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export const WITH_TOKEN: CreateOrderRequest = {
  merchantReference: 'cart-7781',
  amountMinor: 4999,
  assetId: 'USDC',
  networkId: 'ethereum',
  amountBaseUnits: '49990000',
};
export const USD_ONLY: CreateOrderRequest = { merchantReference: 'cart-7790', amountMinor: 12500 };

let hashCounter = 0;
/** A fresh, realistic on-chain hash. */
export const txHash = (): string => `0x${(++hashCounter).toString(16).padStart(8, '0')}${'9b2f6c1e4d7a8b3c5e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f'}`;

export async function deposit(
  c: Pick<Clients, 'sandbox'>,
  orderId: string,
  amountBaseUnits: string,
  verified = true,
  hash = txHash(),
): Promise<{ order: Order; payment: OrderPayment }> {
  const r = await c.sandbox.POST('/sandbox/orders/{orderId}/deposits', { params: { path: { orderId } }, body: { amountBaseUnits, verified, txHash: hash } });
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.response.status).toBe(201);
  return r.data!;
}

/** Every event of the feed, following the cursor. */
export async function allEvents(c: Pick<Clients, 'orders'>, query: { type?: OrderEvent['type']; limit?: number } = {}): Promise<OrderEvent[]> {
  const events: OrderEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await c.orders.GET('/v2/events', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } });
    expect(r.response.status).toBe(200);
    events.push(...orderEventsOf(r.data!.data));
    if (r.data!.nextCursor === null) return events;
    cursor = r.data!.nextCursor;
  }
  throw new Error('the feed did not end');
}

/** An HTTP receiver on loopback that accepts every webhook. */
export async function receiver(): Promise<{ url: string; close(): Promise<void> }> {
  const s: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/webhooks`,
    close: () => new Promise<void>((resolve) => s.close(() => resolve())),
  };
}

/** The helpers that need the test server (started in beforeAll, hence the getter); `order` is createOrder's default body. */
export function orderTesting(server: () => TestServer, order: CreateOrderRequest) {
  return {
    async createOrder(c: Pick<Clients, 'orders'>, body: CreateOrderRequest = order): Promise<Order> {
      const r = await c.orders.POST('/v2/orders', { body });
      expect(r.error, JSON.stringify(r.error)).toBeUndefined();
      expect(r.response.status).toBe(201);
      return r.data!;
    },

    async deliveries(envId: string, q: string | null = null): Promise<DeliveryRecord[]> {
      const page = await server().services.store.transaction((tx) => tx.deliveries.list(envId, { q, limit: 100, cursor: null }));
      return page.items;
    },

    /** The environment's active endpoint at `url`, made as the management API makes one. */
    async insertActiveEndpoint(envId: string, url: string): Promise<EndpointRecord> {
      const services = server().services;
      const env = await services.store.read((tx) => tx.tenants.getEnvironment(envId));
      if (!env) throw new Error(`no environment ${envId}`);
      return (await createEndpoint(services, { tenantId: env.tenantId, environmentId: env.id, environment: env.name }, { url })).endpoint;
    },

  };
}
