// Store.createPayout: a payout inserted and its wallet debited together, or nothing; concurrent
// payouts each decided as if alone, in the order they were queued (SQLite writes a batch of
// them together, bulk-payouts.ts, and falls back to one at a time).
import { expect, it } from 'vitest';
import type { EnvironmentRecord } from '../../domain/model.ts';
import type { PayoutCreation, Store } from '../../domain/store.ts';
import { UniqueViolation } from '../../domain/store.ts';
import { expectUnique, payoutRecord, seedEnvironment } from './fixtures.ts';

/** A payout of `amount` from env's wallet (a fresh id and thirdPartyId unless given). */
export function payoutCreation(env: EnvironmentRecord, amount: string, thirdPartyId?: string): PayoutCreation {
  const transaction = payoutRecord(env, { amount, ...(thirdPartyId === undefined ? {} : { thirdPartyId }) });
  return { transaction, walletDelta: `-${amount}` };
}

const walletOf = async (store: Store, env: EnvironmentRecord): Promise<string | undefined> => (await store.read((tx) => tx.tenants.getEnvironment(env.id)))?.walletBalance;
const storedOf = (store: Store, c: PayoutCreation) => store.read((tx) => tx.transactions.get(c.transaction.environmentId, c.transaction.id));

export function payoutCreationCases(s: () => Store): void {
  it('createPayout inserts the payout and debits the wallet; a wallet too short writes nothing and names its balance', async () => {
    const { env } = await seedEnvironment(s(), { walletBalance: '100' });
    const before = s().transactionsVersion(env.id);
    const paid = payoutCreation(env, '25.5');
    expect(await s().createPayout(paid)).toEqual({ created: true });
    expect(await storedOf(s(), paid)).toEqual(paid.transaction);
    expect(await walletOf(s(), env)).toBe('74.5');
    expect(s().transactionsVersion(env.id)).not.toBe(before);

    const big = payoutCreation(env, '74.51');
    expect(await s().createPayout(big)).toEqual({ created: false, balance: '74.5' });
    expect(await storedOf(s(), big)).toBeNull();
    expect(await walletOf(s(), env)).toBe('74.5');
  });

  it('a repeated thirdPartyId is a UniqueViolation before the wallet is looked at, and changes nothing', async () => {
    const { env } = await seedEnvironment(s(), { walletBalance: '10' });
    expect(await s().createPayout(payoutCreation(env, '1', 'withdrawal-7'))).toEqual({ created: true });
    // Too big for the wallet as well: the duplicate is what the caller hears.
    const again = payoutCreation(env, '500', 'withdrawal-7');
    await expectUnique(s().createPayout(again), 'third_party_id');
    expect(await storedOf(s(), again)).toBeNull();
    expect(await walletOf(s(), env)).toBe('9');
  });

  it('concurrent payouts are decided in the order queued: those the wallet covers go in, the rest are refused, a duplicate fails alone', async () => {
    const { env } = await seedEnvironment(s(), { walletBalance: '100' });
    const { env: other } = await seedEnvironment(s(), { walletBalance: '5' });
    const creations = [
      payoutCreation(env, '40'),
      payoutCreation(other, '2'),
      payoutCreation(env, '30', 'dup-1'),
      payoutCreation(env, '1', 'dup-1'),
      payoutCreation(env, '31'), // 100 - 40 - 30 = 30 left: refused
      payoutCreation(env, '30'), // exactly what is left
      payoutCreation(other, '3'),
    ];
    const settled = await Promise.allSettled(creations.map((c) => s().createPayout(c)));
    const outcome = settled.map((r) => (r.status === 'fulfilled' ? r.value : r.reason instanceof UniqueViolation ? r.reason.constraint : String(r.reason)));
    expect(outcome).toEqual([
      { created: true },
      { created: true },
      { created: true },
      'third_party_id',
      { created: false, balance: '30' },
      { created: true },
      { created: true },
    ]);
    expect(await walletOf(s(), env)).toBe('0');
    expect(await walletOf(s(), other)).toBe('0');
    const stored = await Promise.all(creations.map((c) => storedOf(s(), c)));
    expect(stored.map((t) => t !== null)).toEqual([true, true, true, false, false, true, true]);
    // Listed newest first in the order they went in.
    const listed = await s().read((tx) => tx.transactions.listByUser(env.id, 'user-4821', { limit: 10, cursor: null }));
    expect(listed.items.map((t) => t.id)).toEqual([creations[5]!, creations[2]!, creations[0]!].map((c) => c.transaction.id));
  });
}
