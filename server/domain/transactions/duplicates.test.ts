// The race path of thirdPartyId uniqueness: when the in-transaction check was passed by a
// concurrent request (possible on PostgreSQL), the store's unique index decides and the
// loser gets the same 409 naming the winner, with everything it wrote rolled back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../testing/harness.ts';
import { AppError } from '../errors.ts';
import { createUnique } from './duplicates.ts';
import { createPayout } from './payouts.ts';
import { newTransaction } from './records.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('createUnique', () => {
  it('maps a unique violation on thirdPartyId to 409 with the winner, and rolls the loser back', async () => {
    const t = await server.newTenant();
    const scope = await server.scopeOf(t.tenantId);
    const winner = await createPayout(server.services, scope, { thirdPartyId: 'race-1', userId: 'u1', amount: '10' });

    // A loser that skipped the check (as if it ran concurrently) and already debited the wallet.
    const attempt = createUnique(server.services, scope, { type: 'payout', thirdPartyId: 'race-1' }, async (tx) => {
      await tx.tenants.adjustWallet(scope.environmentId, '-5');
      const loser = newTransaction(scope, Date.now(), { type: 'payout', side: 'credit', status: 'pending', amount: '5', userId: 'u2', thirdPartyId: 'race-1' });
      await tx.transactions.insert(loser);
      return loser;
    });
    const err = await attempt.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ slug: 'duplicate-third-party-id', extras: { existingTransactionId: winner.id } });

    const env = await server.services.store.transaction((tx) => tx.tenants.getEnvironment(scope.environmentId));
    expect(env?.walletBalance).toBe('999990');
  });

  it('lets other errors through unchanged', async () => {
    const t = await server.newTenant();
    const scope = await server.scopeOf(t.tenantId);
    const boom = new Error('boom');
    await expect(
      createUnique(server.services, scope, { type: 'payout', thirdPartyId: 'x' }, async () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
  });
});
