// Store.prune: bounded batches of expired rows, each environment by its own cutoff; what is
// still pending, still referred to, or a financial record stays.
import { expect, it } from 'vitest';
import type { DeliveryRecord, EnvironmentRecord, EventRecord } from '../../domain/model.ts';
import type { PruneRequest, PruneResult, Store } from '../../domain/store.ts';
import { ENVIRONMENTS_PER_BATCH } from '../retention.ts';
import { T0, attempt, deliveryRecord, endpointRecord, eventRecord, orderRecord, seedEnvironment, unique } from './fixtures.ts';

const DAY = 86_400_000;
const SEED_TENANTS_PER_TRANSACTION = 50;
const NOW = T0 + 40 * DAY;
const policy = (limit: number): PruneRequest => ({ activityBefore: { live: NOW - 30 * DAY, test: NOW - 7 * DAY }, keysBefore: NOW - 3 * DAY, limit });

/** Statements the open store has sent since `n` was last set (the suite's onStatement). */
export interface StatementCounter {
  n: number;
}

/** Opens a second store over the same database as the one given (another instance), for the caller to close. */
export type OpenBeside = (store: Store) => Promise<Store>;

export function retentionCases(s: () => Store, statements: StatementCounter, openBeside: OpenBeside): void {
  const exists = async (environmentId: string, d: DeliveryRecord): Promise<boolean> => (await s().read((tx) => tx.deliveries.get(environmentId, d.id))) !== null;
  const eventExists = async (e: EventRecord): Promise<boolean> => (await s().read((tx) => tx.events.get(e.environmentId, e.id))) !== null;

  it('prune removes expired deliveries that are done, with their attempts, and events nothing refers to; keeps pending, recent and financial rows', async () => {
    const { tenant, env: live } = await seedEnvironment(s(), { name: 'live' });
    const { env: test } = await seedEnvironment(s(), { name: 'test', tenant });
    const ep = endpointRecord(live);
    const old = eventRecord(live, { createdAt: T0 });
    const oldPending = eventRecord(live, { createdAt: T0 });
    const tenDays = eventRecord(live, { createdAt: NOW - 10 * DAY });
    const testTenDays = eventRecord(test, { createdAt: NOW - 10 * DAY });
    const sent = deliveryRecord(old, ep, { createdAt: T0, nextAttemptAt: T0 });
    const failed = deliveryRecord(old, ep, { state: 'failed', nextAttemptAt: null, createdAt: T0 });
    const retrying = deliveryRecord(oldPending, ep, { createdAt: T0, nextAttemptAt: NOW + 60_000, attemptCount: 3 });
    const recent = deliveryRecord(tenDays, ep, { state: 'delivered', nextAttemptAt: null, deliveredAt: NOW - 10 * DAY, createdAt: NOW - 10 * DAY });
    const testFailed = deliveryRecord(testTenDays, null, { state: 'failed', nextAttemptAt: null, createdAt: NOW - 10 * DAY });
    const order = orderRecord(live, 'ORD-000001', { createdAt: T0 });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(ep);
      for (const e of [old, oldPending, tenDays, testTenDays]) await tx.events.insert(e);
      for (const d of [sent, failed, retrying, recent, testFailed]) await tx.deliveries.insert(d);
      await tx.orders.insert(order);
      await tx.orders.insertIdempotencyKey(live.id, 'expired-key', { orderId: order.id, requestHash: 'a'.repeat(64), createdAt: T0 });
      await tx.orders.insertIdempotencyKey(live.id, 'fresh-key', { orderId: order.id, requestHash: 'b'.repeat(64), createdAt: NOW - DAY });
    });
    // `sent` gets its attempt the way the worker records one.
    const [claimed] = await s().queue.claim({ owner: 'w', now: T0, leaseMs: 30_000, limit: 1, perEndpointLimit: 4 });
    expect(claimed?.delivery.id).toBe(sent.id);
    const result = { attempt: attempt(sent.id), state: 'delivered' as const, nextAttemptAt: null, deliveredAt: T0 };
    expect((await s().queue.completeAndClaim('w', [{ deliveryId: sent.id, leaseExpiresAt: T0 + 30_000, result }], null)).applied).toEqual([true]);

    const r = await s().prune(policy(100));
    expect(r).toEqual({ ran: true, deleted: { events: 2, deliveries: 3, attempts: 1, idempotencyKeys: 1 }, more: false, oldest: { events: T0, deliveries: T0 } });
    expect(await exists(live.id, sent)).toBe(false);
    expect(await exists(live.id, failed)).toBe(false);
    expect(await exists(test.id, testFailed)).toBe(false);
    expect(await s().read((tx) => tx.deliveries.attempts(sent.id))).toEqual([]);
    expect(await eventExists(old)).toBe(false);
    expect(await eventExists(testTenDays)).toBe(false);
    // Still being retried, its event with it; within the live period; financial records.
    expect(await exists(live.id, retrying)).toBe(true);
    expect(await eventExists(oldPending)).toBe(true);
    expect(await exists(live.id, recent)).toBe(true);
    expect(await eventExists(tenDays)).toBe(true);
    expect(await s().read((tx) => tx.orders.get(live.id, order.id))).not.toBeNull();
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(live.id, 'expired-key'))).toBeNull();
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(live.id, 'fresh-key'))).not.toBeNull();
    // Nothing left to do.
    expect((await s().prune(policy(100))).deleted).toEqual({ events: 0, deliveries: 0, attempts: 0, idempotencyKeys: 0 });
  });

  it('prune works in batches of at most `limit` rows per table and says when more remain', async () => {
    const { env } = await seedEnvironment(s(), { name: 'test' });
    const events = Array.from({ length: 5 }, () => eventRecord(env, { createdAt: T0 }));
    const order = orderRecord(env, 'ORD-000001', { createdAt: T0 });
    await s().transaction(async (tx) => {
      await tx.orders.insert(order);
      for (const [i, e] of events.entries()) {
        await tx.events.insert(e);
        await tx.deliveries.insert(deliveryRecord(e, null, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0, createdAt: T0 }));
        await tx.orders.insertIdempotencyKey(env.id, `key-${i}`, { orderId: order.id, requestHash: 'c'.repeat(64), createdAt: T0 });
      }
    });
    const batches: number[][] = [];
    for (let more = true; more; ) {
      const r = await s().prune(policy(2));
      batches.push([r.deleted.deliveries, r.deleted.events, r.deleted.idempotencyKeys]);
      more = r.more;
      expect(batches.length).toBeLessThan(10);
    }
    for (const b of batches) for (const n of b) expect(n).toBeLessThanOrEqual(2);
    const total = (i: number): number => batches.reduce((sum, b) => sum + (b[i] ?? 0), 0);
    expect([total(0), total(1), total(2)]).toEqual([5, 5, 5]);
    expect((await s().prune(policy(2))).oldest).toEqual({ events: null, deliveries: null });
  });

  /** `n` expired events of the environment, each with a delivered delivery. */
  const expiredRows = (env: EnvironmentRecord, n: number): Array<{ event: EventRecord; delivery: DeliveryRecord }> =>
    Array.from({ length: n }, () => {
      const event = eventRecord(env, { createdAt: T0 });
      return { event, delivery: deliveryRecord(event, null, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0, createdAt: T0 }) };
    });
  const insertRows = (rows: ReadonlyArray<{ event: EventRecord; delivery: DeliveryRecord }>): Promise<void> =>
    s().transaction(async (tx) => {
      for (const r of rows) await tx.events.insert(r.event);
      for (const r of rows) await tx.deliveries.insert(r.delivery);
    });
  /**
   * Environments in tenants of two (test and live), 50 tenants (150 inserts) per transaction:
   * one of 250 took 750 round trips, which a loaded machine did not finish within the store's
   * 4 s transaction deadline.
   */
  const seedEnvironments = async (tenants: number): Promise<EnvironmentRecord[]> => {
    const all: EnvironmentRecord[] = [];
    for (let from = 0; from < tenants; from += SEED_TENANTS_PER_TRANSACTION) {
      await s().transaction(async (tx) => {
        for (let i = from; i < Math.min(tenants, from + SEED_TENANTS_PER_TRANSACTION); i++) {
          const tenant = { id: unique('tenant'), name: `Tenant ${i}`, createdAt: T0 };
          await tx.tenants.insertTenant(tenant);
          for (const name of ['test', 'live'] as const) {
            const env: EnvironmentRecord = { id: unique('env'), tenantId: tenant.id, name, walletBalance: '0', callbackSecretEnc: 'v1.callback.x', createdAt: T0 };
            await tx.tenants.insertEnvironment(env);
            all.push(env);
          }
        }
      });
    }
    return all.sort((a, b) => (a.id < b.id ? -1 : 1));
  };
  /** One batch, with the statements the store sent for it. */
  const batch = async (req: PruneRequest): Promise<PruneResult & { statements: number }> => {
    statements.n = 0;
    const r = await s().prune(req);
    return { ...r, statements: statements.n };
  };

  it(
    'a batch at 10 000 environments runs the statements of a batch at one; a lap reaches every environment, a backlog takes its share, and all is gone within two passes',
    async () => {
      const LIMIT = 20;
      const req: PruneRequest = { ...policy(LIMIT), statementMs: 10_000 };
      // One environment: the statements of a batch that removes deliveries, events and a key.
      const { env: alone } = await seedEnvironment(s(), { name: 'test' });
      await insertRows(expiredRows(alone, 3));
      const order = orderRecord(alone, 'ORD-000001', { createdAt: T0 });
      await s().transaction(async (tx) => {
        await tx.orders.insert(order);
        await tx.orders.insertIdempotencyKey(alone.id, 'old-key', { orderId: order.id, requestHash: 'd'.repeat(64), createdAt: T0 });
      });
      const one = await batch(req);
      expect(one.deleted).toEqual({ events: 3, deliveries: 3, attempts: 0, idempotencyKeys: 1 });
      expect(one.more).toBe(false);
      const atOne = one.statements;
      // Counted at all: with the store's onStatement not called, every count below is 0 and "the same" proves nothing.
      expect(atOne).toBeGreaterThan(0);

      // 10 000 environments: a backlog of 3 batches in the first by id, one expired event and
      // delivery in every 100th and in the last.
      const envs = [alone, ...(await seedEnvironments(5_000))].sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(envs.length).toBeGreaterThan(10_000);
      const first = envs[0]!;
      const last = envs.at(-1)!;
      const backlog = expiredRows(first, 3 * LIMIT);
      const singles = envs.filter((e, i) => i > 0 && (i % 100 === 0 || e === last)).map((e) => ({ env: e, ...expiredRows(e, 1)[0]! }));
      await insertRows(backlog);
      await insertRows(singles);
      const remaining = async (): Promise<number> => {
        let n = 0;
        for (const r of [...backlog, ...singles]) if (await eventExists(r.event)) n += 1;
        return n;
      };

      // A pass cut short after two batches (the pruner stopped), then whole passes.
      const runs: Array<PruneResult & { statements: number }> = [await batch(req), await batch(req)];
      let passes = 0;
      let reachedLast = false;
      while ((await remaining()) > 0) {
        passes += 1;
        expect(passes).toBeLessThanOrEqual(2);
        for (let more = true; more; ) {
          const r = await batch(req);
          runs.push(r);
          more = r.more;
          // Round-robin: the last environment is reached while the first still has its backlog.
          if (!reachedLast && !(await eventExists(singles.at(-1)!.event))) {
            reachedLast = true;
            expect(await eventExists(backlog.at(-1)!.event)).toBe(true);
          }
          expect(runs.length).toBeLessThan(200);
        }
      }
      expect(reachedLast).toBe(true);
      // The same statements per batch whatever the number of environments, none more than at one.
      expect(Math.max(...runs.map((r) => r.statements))).toBe(atOne);
      expect(Math.min(...runs.map((r) => r.statements))).toBeGreaterThan(0);
      for (const r of runs) for (const n of [r.deleted.events, r.deleted.deliveries]) expect(n).toBeLessThanOrEqual(LIMIT);
      // Every environment was looked at in slices, not one by one.
      expect(runs.length).toBeLessThan(4 * Math.ceil(envs.length / ENVIRONMENTS_PER_BATCH) + 3 * 3);
    },
    180_000,
  );

  /** `n` expired events of the environment that no delivery refers to. */
  const insertEvents = async (env: EnvironmentRecord, n: number): Promise<EventRecord[]> => {
    const events = Array.from({ length: n }, () => eventRecord(env, { createdAt: T0 }));
    await s().transaction(async (tx) => {
      for (const e of events) await tx.events.insert(e);
    });
    return events;
  };
  const remainingOf = async (events: readonly EventRecord[]): Promise<number> => {
    let n = 0;
    for (const e of events) if (await eventExists(e)) n += 1;
    return n;
  };

  it('two pruning stores on one database share one lap, and a store opened after a restart goes on where the lap stood', async () => {
    // limit 1: a batch takes one environment with expired rows, and one event of it.
    const envs: EnvironmentRecord[] = [];
    for (let i = 0; i < 4; i++) envs.push((await seedEnvironment(s(), { name: 'test' })).env);
    envs.sort((a, b) => (a.id < b.id ? -1 : 1));
    const events = new Map<string, EventRecord[]>();
    for (const env of envs) events.set(env.id, await insertEvents(env, 2));
    const opened: Store[] = [];
    const beside = async (): Promise<Store> => {
      const store = await openBeside(s());
      opened.push(store);
      await store.migrate();
      return store;
    };
    try {
      const other = await beside();
      expect((await s().prune(policy(1))).deleted.events).toBe(1);
      expect((await other.prune(policy(1))).deleted.events).toBe(1);
      // The other instance restarts: its successor knows nothing of the lap in memory.
      await opened.shift()?.close();
      const restarted = await beside();
      expect((await restarted.prune(policy(1))).deleted.events).toBe(1);
      expect((await s().prune(policy(1))).deleted.events).toBe(1);
      // Four batches, one lap: every environment reached once, none twice.
      for (const env of envs) expect(await remainingOf(events.get(env.id) ?? [])).toBe(1);
      // The next lap, from either store, removes the rest.
      for (let batches = 0, more = true; more; batches++) {
        expect(batches).toBeLessThan(8);
        more = (await (batches % 2 === 0 ? restarted : s()).prune(policy(1))).more;
      }
      for (const env of envs) expect(await remainingOf(events.get(env.id) ?? [])).toBe(0);
    } finally {
      for (const store of opened) await store.close();
    }
  });

  it("a pending delivery on an environment's oldest expired event does not stop its other expired events from going", async () => {
    const { env } = await seedEnvironment(s(), { name: 'live' });
    const [needed, ...rest] = await insertEvents(env, 4);
    // Re-queued by a recovery: still being retried, so its event stays.
    const pending = deliveryRecord(needed!, null, { createdAt: NOW - DAY, nextAttemptAt: NOW + 60_000, attemptCount: 1 });
    await s().transaction((tx) => tx.deliveries.insert(pending));
    // limit 1: each environment's window of events is one row, the one the old window stuck on.
    for (let batches = 0, more = true; more; batches++) {
      expect(batches).toBeLessThan(10);
      more = (await s().prune(policy(1))).more;
    }
    expect(await remainingOf(rest)).toBe(0);
    expect(await eventExists(needed!)).toBe(true);
    expect(await exists(env.id, pending)).toBe(true);
  });
}
