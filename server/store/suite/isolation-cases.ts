// Tenant isolation: whatever one environment wrote is invisible through another's id.
import { expect, it } from 'vitest';
import { newServiceAccountId } from '../../domain/ids.ts';
import type { Store } from '../../domain/store.ts';
import { T0, deliveryRecord, endpointRecord, eventRecord, memberRecord, orderRecord, paymentRecord, payoutRecord, seedEnvironment } from './fixtures.ts';

export function isolationCases(s: () => Store): void {
  it('every get and list with another environment’s id returns nothing', async () => {
    const a = await seedEnvironment(s(), { walletBalance: '500' });
    const b = await seedEnvironment(s(), { walletBalance: '0' });
    const order = orderRecord(a.env, 'ORD-000001');
    const payout = payoutRecord(a.env, { userId: 'user-shared' });
    const payment = paymentRecord(a.env, { orderId: order.id, orderNumber: order.orderNumber });
    const event = eventRecord(a.env, { orderId: order.id, merchantReference: order.merchantReference });
    const ep = endpointRecord(a.env);
    const failed = deliveryRecord(event, ep, { state: 'failed', nextAttemptAt: null });
    const member = memberRecord(a.tenant);
    const account = { id: newServiceAccountId(), tenantId: a.tenant.id, email: 'bot@northwind.example', createdAt: T0 };
    await s().transaction(async (tx) => {
      await tx.orders.insert(order);
      await tx.transactions.insert(payout);
      await tx.transactions.insert(payment);
      await tx.events.insert(event);
      await tx.endpoints.insert(ep);
      await tx.deliveries.insert(failed);
      await tx.tenants.insertMember(member);
      await tx.tenants.insertServiceAccount(account);
    });
    const B = b.env.id;
    await s().transaction(async (tx) => {
      expect(await tx.transactions.get(B, payout.id)).toBeNull();
      expect(await tx.transactions.findByThirdPartyId(B, 'payout', payout.thirdPartyId!)).toBeNull();
      expect(await tx.transactions.listByUser(B, 'user-shared', { limit: 10, cursor: null })).toEqual({ items: [], nextCursor: null });
      expect(await tx.transactions.listByUser(B, 'user-shared', { limit: 10, transactionId: payout.id, cursor: null })).toEqual({ items: [], nextCursor: null });
      expect(await tx.transactions.search(B, { orderNumber: payment.orderNumber! })).toBeNull();
      expect(await tx.transactions.search(B, { txHash: payment.txHash! })).toBeNull();
      expect(await tx.transactions.listByOrder(B, order.id)).toEqual([]);
      expect(await tx.transactions.updateStatus(B, payout.id, 'pending', 'cancelled', null)).toBe(false);
      expect(await tx.orders.get(B, order.id)).toBeNull();
      expect(await tx.events.get(B, event.id)).toBeNull();
      expect(await tx.events.list(B, { types: [], limit: 10, cursor: null })).toEqual({ items: [], nextCursor: null });
      expect(await tx.endpoints.get(B, ep.id)).toBeNull();
      expect(await tx.endpoints.listActive(B)).toEqual([]);
      expect(await tx.endpoints.list(B)).toEqual([]);
      expect(await tx.deliveries.get(B, failed.id)).toBeNull();
      for (const q of [null, order.id, order.merchantReference, event.id]) {
        expect(await tx.deliveries.list(B, { q, limit: 10, cursor: null })).toEqual({ items: [], nextCursor: null });
      }
      expect(await tx.deliveries.restart({ id: failed.id, environmentId: B, endpointId: null, endpointVersion: null, url: 'https://evil.example/', now: T0 })).toBe(false);
      expect(await tx.tenants.setMemberActive(member.id, b.tenant.id, false)).toBe(false);
      expect(await tx.tenants.findServiceAccount(b.tenant.id, account.email)).toBeNull();
      expect(await tx.tenants.findEnvironment(b.tenant.id, 'test')).toEqual(b.env);
      expect(await tx.tenants.findEnvironment(b.tenant.id, 'live')).toBeNull();
    });
    await s().transaction(async (tx) => {
      expect(await tx.transactions.get(a.env.id, payout.id)).toEqual(payout);
      expect(await tx.deliveries.get(a.env.id, failed.id)).toEqual(failed);
      expect((await tx.tenants.getMemberByTokenHash(member.tokenHash))?.active).toBe(true);
    });
  });
}
