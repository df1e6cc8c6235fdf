// The batched payout writes of the SQLite store (bulk-payouts.ts): a batch's payouts take one
// insert and one wallet read and update for all of them; the store suite's payout cases check
// the fallback (a duplicate, a wallet short of the batch's sum) on every store.
import { describe, expect, it } from 'vitest';
import { isStoreUnavailable } from '../../domain/store-unavailable.ts';
import { seedEnvironment } from '../suite/fixtures.ts';
import { payoutCreation } from '../suite/payout-creation-cases.ts';
import { statementRecordingStores, transactionEndingStore, writeHeads } from './testing.ts';

describe('SQLite bulk payouts', () => {
  const open = statementRecordingStores('store-bulk-payouts');

  it('writes a batch of 20 payouts in five statements: BEGIN, one insert, the wallet read and update, COMMIT', async () => {
    const { store, statements } = await open();
    const { env } = await seedEnvironment(store, { walletBalance: '1000' });
    const creations = Array.from({ length: 20 }, (_, i) => payoutCreation(env, `${i + 1}.25`));
    statements.length = 0;
    const results = await Promise.all(creations.map((c) => store.createPayout(c)));
    expect(results).toEqual(creations.map(() => ({ created: true })));
    expect(writeHeads(statements)).toEqual([
      'BEGIN IMMEDIATE',
      'INSERT INTO transactions',
      'SELECT wallet_balance FROM',
      'UPDATE environments SET',
      'COMMIT',
    ]);
    expect(store.committer.stats.bulkUnits).toBe(20);
    // 1000 - (1.25 + 2.25 + … + 20.25) = 1000 - 215
    expect((await store.read((tx) => tx.tenants.getEnvironment(env.id)))?.walletBalance).toBe('785');
    const listed = await store.read((tx) => tx.transactions.listByUser(env.id, 'user-4821', { limit: 20, cursor: null }));
    expect(listed.items.map((t) => t.id)).toEqual(creations.map((c) => c.transaction.id).reverse());
  });

  for (const [when, faults] of [['once', 1], ['every time', Infinity]] as const) {
    it(`an error that ends the whole transaction ${when}: every caller of the batch is answered store-unavailable, no payout is stored, the wallet is untouched`, async () => {
      const { store, faults: armed } = await transactionEndingStore(/^INSERT INTO transactions/);
      try {
        const { env } = await seedEnvironment(store, { walletBalance: '100' });
        const creations = Array.from({ length: 5 }, () => payoutCreation(env, '1.5'));
        armed.left = faults;
        const settled = await Promise.allSettled(creations.map((c) => store.createPayout(c)));
        armed.left = 0;
        expect(settled.map((s) => s.status === 'rejected' && isStoreUnavailable(s.reason))).toEqual(Array(5).fill(true));
        const stored = await store.read((tx) => Promise.all(creations.map((c) => tx.transactions.get(env.id, c.transaction.id))));
        expect(stored.filter((t) => t !== null)).toEqual([]);
        expect((await store.read((tx) => tx.tenants.getEnvironment(env.id)))?.walletBalance).toBe('100');
        // The same payouts again: all created, once each.
        expect(await Promise.all(creations.map((c) => store.createPayout(c)))).toEqual(creations.map(() => ({ created: true })));
        expect((await store.read((tx) => tx.tenants.getEnvironment(env.id)))?.walletBalance).toBe('92.5');
      } finally {
        await store.close();
      }
    });
  }
});
