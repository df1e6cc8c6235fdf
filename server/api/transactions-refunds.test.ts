// The Transactions API end to end: refunds of unlinked payments.
import { describe, expect, it } from 'vitest';
import { createServiceAccount } from '../domain/admin.ts';
import { expectProblem } from '../testing/raw-http.ts';
import { setupServer, START, server, clock, send, credsOf, stored, listOf, payout, unlinkedPayment } from './testing/transactions.ts';

setupServer();

describe('POST /transactions/refund', () => {
  it('refunds a pending_confirmation payment to a service account (e-mail case-insensitive)', async () => {
    const t = await server.newTenant();
    await createServiceAccount(server.services, { tenantId: t.tenantId, email: 'maria.santos@mail.example' });
    clock.set(START);
    const pay = await unlinkedPayment(t, 'user_5521', 75.5);
    clock.set(START + 90_000);
    const { data, response } = await t.transactions.POST('/transactions/refund', { body: { txId: pay.id, email: 'Maria.Santos@Mail.Example' } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ status: 'refunded', message: `Payment ${pay.id} of 75.5 was refunded to the service account maria.santos@mail.example.` });
    expect(await stored(t.tenantId, pay.id)).toMatchObject({ status: 'refunded', refundEmail: 'maria.santos@mail.example', completedAt: START + 90_000 });
    const [item] = await listOf(t, 'user_5521');
    expect(item).toMatchObject({ status: 'refunded', completedDate: '2026-11-20T14:03:41.480Z' });

    const twice = await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: pay.id, email: 'maria.santos@mail.example' } });
    expectProblem(twice, 409, 'not-refundable');
    expect(twice.body.detail).toContain('refunded');
  });

  it('answers 404 unknown, 409 not a payment, 422 unknown account, and changes nothing', async () => {
    const t = await server.newTenant();
    const other = await server.newTenant();
    await createServiceAccount(server.services, { tenantId: t.tenantId, email: 'ops@merchant.example' });
    await createServiceAccount(server.services, { tenantId: other.tenantId, email: 'their-ops@merchant.example' });
    const pay = await unlinkedPayment(t, 'u-ref');
    const po = await payout(t, { userId: 'u-ref', amount: 1 });

    expectProblem(await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: 'txn_01JD5A2K8N4P7R1T6V9X3Z0BCF', email: 'ops@merchant.example' } }), 404, 'not-found');
    const notPayment = await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: po.data!.transactionId, email: 'ops@merchant.example' } });
    expectProblem(notPayment, 409, 'not-refundable');
    expect(notPayment.body.detail).toContain('a payout');
    const unknown = await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: pay.id, email: 'nobody@merchant.example' } });
    expectProblem(unknown, 422, 'unknown-refund-account');
    // A service account of another tenant is not one of ours.
    expectProblem(await send(credsOf(t), 'POST', '/transactions/refund', { json: { txId: pay.id, email: 'their-ops@merchant.example' } }), 422, 'unknown-refund-account');
    expect(await stored(t.tenantId, pay.id)).toMatchObject({ status: 'pending_confirmation', refundEmail: null, completedAt: null });
    expect((await stored(t.tenantId, po.data!.transactionId))?.status).toBe('pending');
  });
});
