// How a store treats its own misuse and its end: a nested transaction, a Tx kept beyond its
// callback and a closed store are programming errors; work submitted before close finishes.
import { expect, it } from 'vitest';
import type { Store, Tx } from '../../domain/store.ts';
import { payoutRecord, seedEnvironment } from './fixtures.ts';

export function lifecycleCases(s: () => Store): void {
  it('treats a nested transaction, a leaked Tx and a closed store as programming errors', async () => {
    const store = s();
    const { env } = await seedEnvironment(store);
    await expect(store.transaction(() => store.transaction(async () => 1))).rejects.toThrow(/nested/);
    await expect(store.transaction(() => store.queue.nextDueAt())).rejects.toThrow(/nested/);
    let leaked: Tx | undefined;
    await store.transaction(async (tx) => {
      leaked = tx;
    });
    await expect(leaked!.transactions.insert(payoutRecord(env))).rejects.toThrow(/already finished/);
    expect(() => leaked!.afterCommit(() => undefined)).toThrow(/already finished/);
    // Also while a later transaction runs on what the store built for the earlier one (SQLite's
    // writer makes its repositories once): the leaked Tx still fails, the open one works.
    await store.transaction(async (tx) => {
      await expect(leaked!.transactions.insert(payoutRecord(env))).rejects.toThrow(/already finished/);
      expect(() => leaked!.afterCommit(() => undefined)).toThrow(/already finished/);
      expect(await tx.tenants.getEnvironment(env.id)).toEqual(env);
      // A method taken off its repository has no transaction to check against: it says so.
      const { getEnvironment } = tx.tenants;
      await expect(getEnvironment(env.id)).rejects.toThrow(/apart from its repository/);
    });
    // After all that the store still works.
    expect(await store.transaction((tx) => tx.tenants.getEnvironment(env.id))).toEqual(env);
    await store.close();
    await expect(store.transaction(async () => 1)).rejects.toThrow(/closed/);
    await expect(store.queue.nextDueAt()).rejects.toThrow(/closed/);
  });

  it('finishes work submitted before close, then closes', async () => {
    const store = s();
    const { env } = await seedEnvironment(store);
    // close() is called while the transaction is inside its callback, which then goes on.
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    let goOn!: () => void;
    const gate = new Promise<void>((resolve) => (goOn = resolve));
    const pending = store.transaction(async (tx) => {
      inside();
      await gate;
      await tx.transactions.insert(payoutRecord(env));
      return 'done';
    });
    await entered;
    const closing = store.close();
    goOn();
    await closing;
    expect(await pending).toBe('done');
  });
}
