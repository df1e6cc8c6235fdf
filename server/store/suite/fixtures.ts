// Realistic records for the store suite. Every builder takes overrides; ids are fresh each call.
import { expect } from 'vitest';
import {
  newDeliveryId,
  newEndpointId,
  newEnvironmentId,
  newEventId,
  newMemberId,
  newOrderId,
  newTenantId,
  newTransactionId,
} from '../../domain/ids.ts';
import { UniqueViolation } from '../../domain/store.ts';
import type { Store } from '../../domain/store.ts';
import { HEALTHY, type AttemptRecord, type DeliveryRecord, type EndpointRecord, type EnvironmentName, type EnvironmentRecord, type EventRecord, type MemberRecord, type OrderRecord, type TenantRecord, type TransactionRecord } from '../../domain/model.ts';

/** 2026-11-22T08:00:00Z, the suite's "now". */
export const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);

let counter = 0;
export const unique = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${++counter}`;

export interface Seeded {
  tenant: TenantRecord;
  env: EnvironmentRecord;
}

export async function seedEnvironment(store: Store, opts: { name?: EnvironmentName; walletBalance?: string; tenant?: TenantRecord } = {}): Promise<Seeded> {
  const tenant = opts.tenant ?? { id: newTenantId(), name: 'Northwind Games Ltd', createdAt: T0 };
  const env: EnvironmentRecord = {
    id: newEnvironmentId(),
    tenantId: tenant.id,
    name: opts.name ?? 'test',
    walletBalance: opts.walletBalance ?? '0',
    callbackSecretEnc: `v1.callback.${unique('secret')}`,
    createdAt: T0,
  };
  await store.transaction(async (tx) => {
    if (!opts.tenant) await tx.tenants.insertTenant(tenant);
    await tx.tenants.insertEnvironment(env);
  });
  return { tenant, env };
}

export function payoutRecord(env: EnvironmentRecord, o: Partial<TransactionRecord> = {}): TransactionRecord {
  return {
    id: newTransactionId(),
    environmentId: env.id,
    tenantId: env.tenantId,
    type: 'payout',
    side: 'debit',
    status: 'pending',
    userId: 'user-4821',
    amount: '25.5',
    amountBaseUnits: null,
    thirdPartyId: unique('payout'),
    notifyUrl: 'https://api.northwind.example/payout-callbacks',
    asset: 'USDT',
    durationInMonths: null,
    orderId: null,
    orderNumber: null,
    txHash: null,
    verified: null,
    refundEmail: null,
    createdAt: T0,
    completedAt: null,
    ...o,
  };
}

export function paymentRecord(env: EnvironmentRecord, o: Partial<TransactionRecord> = {}): TransactionRecord {
  return payoutRecord(env, {
    type: 'payment',
    side: 'credit',
    status: 'pending_confirmation',
    userId: null,
    amount: '49.99',
    amountBaseUnits: '49990000',
    thirdPartyId: null,
    notifyUrl: null,
    orderId: '6f1c2a9e-4b7d-4e0a-9c55-3d2f8b1a7e10',
    orderNumber: 'ORD-000042',
    txHash: `0x${'ab'.repeat(32)}`,
    verified: false,
    ...o,
  });
}

export function orderRecord(env: EnvironmentRecord, orderNumber: string, o: Partial<OrderRecord> = {}): OrderRecord {
  return {
    id: newOrderId(),
    environmentId: env.id,
    orderNumber,
    merchantReference: unique('INV-2026'),
    amountMinor: 4999,
    assetId: 'usdc',
    networkId: 'ethereum',
    amountBaseUnits: '49990000',
    receivedBaseUnits: '0',
    overpaymentBaseUnits: null,
    status: 'open',
    paymentStatus: 'unpaid',
    reviewReason: null,
    createdAt: T0,
    updatedAt: T0,
    ...o,
  };
}

export function memberRecord(tenant: TenantRecord, o: Partial<MemberRecord> = {}): MemberRecord {
  return {
    id: newMemberId(),
    tenantId: tenant.id,
    email: 'dana.ops@northwind.example',
    role: 'developer',
    active: true,
    tokenHash: unique('token-hash'),
    createdAt: T0,
    sessionEpoch: 0,
    ...o,
  };
}

export function eventRecord(env: EnvironmentRecord, o: Partial<EventRecord> = {}): EventRecord {
  const id = o.id ?? newEventId();
  return {
    id,
    environmentId: env.id,
    type: 'order.created',
    payload: JSON.stringify({ id, type: o.type ?? 'order.created', createdAt: new Date(o.createdAt ?? T0).toISOString() }),
    orderId: null,
    merchantReference: null,
    transactionId: null,
    createdAt: T0,
    ...o,
  };
}

export function endpointRecord(env: EnvironmentRecord, o: Partial<EndpointRecord> = {}): EndpointRecord {
  return {
    id: newEndpointId(),
    environmentId: env.id,
    url: 'https://hooks.northwind.example/payments',
    secretEnc: `v1.endpoint.${unique('secret')}`,
    signatureScheme: 'service-signature',
    eventTypes: null,
    maxPerSecond: null,
    active: true,
    version: 1,
    lastTestDeliveryId: null,
    createdAt: T0,
    updatedAt: T0,
    disabledAt: null,
    ...HEALTHY,
    ...o,
  };
}

/**
 * Three active endpoints of env, stored: one for every type, one for order.created (version 2)
 * and one for order.paid; `targets` are the two an order.created event goes to, by id.
 */
export async function seedRoutedEndpoints(store: Store, env: EnvironmentRecord): Promise<{ every: EndpointRecord; created: EndpointRecord; paid: EndpointRecord; targets: EndpointRecord[] }> {
  const every = endpointRecord(env, { url: 'https://hooks.northwind.example/every' });
  const created = endpointRecord(env, { url: 'https://hooks.northwind.example/created', eventTypes: ['order.created'], version: 2 });
  const paid = endpointRecord(env, { url: 'https://hooks.northwind.example/paid', eventTypes: ['order.paid'] });
  await store.transaction(async (tx) => {
    for (const e of [every, created, paid]) await tx.endpoints.insert(e);
  });
  return { every, created, paid, targets: [every, created].sort((a, b) => (a.id < b.id ? -1 : 1)) };
}

/** An active endpoint and an event of env, both stored in one transaction. */
export async function seedEndpointAndEvent(store: Store, env: EnvironmentRecord, event: Partial<EventRecord> = {}): Promise<{ ep: EndpointRecord; event: EventRecord }> {
  const ep = endpointRecord(env);
  const e = eventRecord(env, event);
  await store.transaction(async (tx) => {
    await tx.endpoints.insert(ep);
    await tx.events.insert(e);
  });
  return { ep, event: e };
}

/** A delivery of `event` to `endpoint`, or a payout callback to `url` when endpoint is null. */
export function deliveryRecord(event: EventRecord, endpoint: EndpointRecord | null, o: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id: newDeliveryId(),
    environmentId: event.environmentId,
    eventId: event.id,
    kind: endpoint ? 'order_event' : 'payout_callback',
    endpointId: endpoint?.id ?? null,
    endpointVersion: endpoint?.version ?? null,
    url: endpoint?.url ?? 'https://api.northwind.example/payout-callbacks',
    state: 'pending',
    attemptCount: 0,
    cycle: 1,
    nextAttemptAt: T0,
    leaseOwner: null,
    leaseExpiresAt: null,
    orderId: event.orderId,
    merchantReference: event.merchantReference,
    transactionId: event.transactionId,
    createdAt: T0,
    updatedAt: T0,
    deliveredAt: null,
    ...o,
  };
}

export function attempt(deliveryId: string, o: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    deliveryId,
    cycle: 1,
    number: 1,
    startedAt: T0,
    durationMs: 183,
    signatureTimestamp: Math.floor(T0 / 1000),
    outcome: 'response',
    statusCode: 200,
    errorClass: null,
    responseBody: '{"received":true}',
    success: true,
    ...o,
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Expects `p` to reject with UniqueViolation(constraint), whatever cause the store attached. */
export async function expectUnique(p: Promise<unknown>, constraint: UniqueViolation['constraint']): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UniqueViolation);
  expect((err as UniqueViolation).constraint).toBe(constraint);
}
