// Tenants, keys, members, wallets, transactions, orders, and the transaction semantics.
import { expect, it } from 'vitest';
import { newServiceAccountId } from '../../domain/ids.ts';
import { InvalidCursorError } from '../../domain/store-errors.ts';
import type { Page, Store, UniqueViolation } from '../../domain/store.ts';
import type { ApiKeyRecord, TransactionRecord } from '../../domain/model.ts';
import { T0, expectUnique, memberRecord, orderRecord, paymentRecord, payoutRecord, seedEnvironment, eventRecord, unique } from './fixtures.ts';

export function coreCases(s: () => Store): void {
  it('migrate is idempotent: a second and third run change nothing', async () => {
    const { tenant } = await seedEnvironment(s());
    await s().migrate();
    await s().migrate();
    expect(await s().transaction((tx) => tx.tenants.getTenant(tenant.id))).toEqual(tenant);
  });

  it('round-trips tenants, environments, API keys, members and service accounts', async () => {
    const { tenant, env } = await seedEnvironment(s(), { walletBalance: '1500.25' });
    const live = (await seedEnvironment(s(), { tenant, name: 'live' })).env;
    const key: ApiKeyRecord = {
      id: unique('pk_test'),
      tenantId: tenant.id,
      environmentId: env.id,
      secretHash: '5f3a806b5c62594e9f5139a2b5588458796c2a9e3ae8e1cd8c07081036b2a4c2', // SHA-256 hex, as hashToken stores it
      permissions: ['payouts', 'transactions_read', 'webhooks_manage'],
      label: 'Payout worker',
      createdAt: T0,
      revokedAt: null,
    };
    const noLabel: ApiKeyRecord = { ...key, id: unique('pk_test'), permissions: [], label: null, revokedAt: T0 + 1000 };
    const member = memberRecord(tenant, { role: 'administrator' });
    const account = { id: newServiceAccountId(), tenantId: tenant.id, email: 'payouts-bot@northwind.example', createdAt: T0 };
    await s().transaction(async (tx) => {
      await tx.tenants.insertApiKey(key);
      await tx.tenants.insertApiKey(noLabel);
      await tx.tenants.insertMember(member);
      await tx.tenants.insertServiceAccount(account);
    });
    await s().transaction(async (tx) => {
      expect(await tx.tenants.getTenant(tenant.id)).toEqual(tenant);
      expect(await tx.tenants.getTenant('ten_unknown')).toBeNull();
      expect(await tx.tenants.getEnvironment(env.id)).toEqual(env);
      expect(await tx.tenants.findEnvironment(tenant.id, 'test')).toEqual(env);
      expect(await tx.tenants.findEnvironment(tenant.id, 'live')).toEqual(live);
      expect(await tx.tenants.getApiKey(key.id)).toEqual(key);
      expect(await tx.tenants.getApiKey(noLabel.id)).toEqual(noLabel);
      expect(await tx.tenants.getApiKey('pk_test_unknown')).toBeNull();
      expect(await tx.tenants.getMemberByTokenHash(member.tokenHash)).toEqual(member);
      expect(await tx.tenants.findServiceAccount(tenant.id, account.email)).toEqual(account);
      expect(await tx.tenants.findServiceAccount(tenant.id, 'nobody@northwind.example')).toBeNull();
    });
    await s().transaction(async (tx) => {
      expect(await tx.tenants.setMemberActive(member.id, tenant.id, false)).toBe(true);
      await tx.tenants.setCallbackSecret(env.id, 'v1.callback.rotated');
    });
    await s().transaction(async (tx) => {
      expect((await tx.tenants.getMemberByTokenHash(member.tokenHash))?.active).toBe(false);
      expect((await tx.tenants.getEnvironment(env.id))?.callbackSecretEnc).toBe('v1.callback.rotated');
    });
  });

  it('revokeApiKey revokes the tenant\'s own key once and keeps the first revocation time', async () => {
    const { tenant, env } = await seedEnvironment(s());
    const other = await seedEnvironment(s());
    const key: ApiKeyRecord = {
      id: unique('pk_test'),
      tenantId: tenant.id,
      environmentId: env.id,
      secretHash: 'ab'.repeat(32),
      permissions: ['payouts'],
      label: null,
      createdAt: T0,
      revokedAt: null,
    };
    await s().transaction((tx) => tx.tenants.insertApiKey(key));
    expect(await s().transaction((tx) => tx.tenants.revokeApiKey(key.id, other.tenant.id, T0 + 5))).toBe(false);
    expect(await s().read((tx) => tx.tenants.getApiKey(key.id))).toEqual(key);
    expect(await s().transaction((tx) => tx.tenants.revokeApiKey(key.id, tenant.id, T0 + 10))).toBe(true);
    expect(await s().transaction((tx) => tx.tenants.revokeApiKey(key.id, tenant.id, T0 + 20))).toBe(false);
    expect(await s().read((tx) => tx.tenants.getApiKey(key.id))).toEqual({ ...key, revokedAt: T0 + 10 });
  });

  it('read sees what is committed, never a transaction in progress, and is refused inside a transaction', async () => {
    const { env } = await seedEnvironment(s());
    const payout = payoutRecord(env);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const wasInserted = new Promise<void>((r) => (inserted = r));
    const writing = s().transaction(async (tx) => {
      await tx.transactions.insert(payout);
      inserted();
      await held;
    });
    await wasInserted;
    // The write is not committed yet: a read does not see it, and does not wait for it.
    expect(await s().read((tx) => tx.transactions.get(env.id, payout.id))).toBeNull();
    release();
    await writing;
    expect(await s().read((tx) => tx.transactions.get(env.id, payout.id))).toEqual(payout);
    await expect(s().transaction(() => s().read((tx) => tx.transactions.get(env.id, payout.id)))).rejects.toThrow(/nested/);
  });

  it('refuses a duplicate tenant id and a duplicate service account email per tenant', async () => {
    const { tenant } = await seedEnvironment(s());
    const other = await seedEnvironment(s());
    await expectUnique(s().transaction((tx) => tx.tenants.insertTenant({ ...tenant, name: 'Copy' })), 'primary_key');
    const account = { id: newServiceAccountId(), tenantId: tenant.id, email: 'ops-bot@northwind.example', createdAt: T0 };
    await s().transaction((tx) => tx.tenants.insertServiceAccount(account));
    await expectUnique(s().transaction((tx) => tx.tenants.insertServiceAccount({ ...account, id: newServiceAccountId() })), 'service_account_email');
    await s().transaction((tx) => tx.tenants.insertServiceAccount({ ...account, id: newServiceAccountId(), tenantId: other.tenant.id }));
  });

  it('adjustWallet is exact with decimals and never goes below zero', async () => {
    const { env } = await seedEnvironment(s(), { walletBalance: '0' });
    const adjust = (delta: string) => s().transaction((tx) => tx.tenants.adjustWallet(env.id, delta));
    expect(await adjust('0.1')).toBe('0.1');
    expect(await adjust('0.2')).toBe('0.3');
    expect(await adjust('-0.30000001')).toBeNull();
    expect(await adjust('12345678.12345678')).toBe('12345678.42345678');
    expect(await adjust('0.00000002')).toBe('12345678.4234568');
    expect(await adjust('-12345678.4234568')).toBe('0');
    expect(await adjust('-0.00000001')).toBeNull();
    expect((await s().transaction((tx) => tx.tenants.getEnvironment(env.id)))?.walletBalance).toBe('0');
    expect(await s().transaction((tx) => tx.tenants.adjustWallet('env_unknown', '1'))).toBeNull();
  });

  it('insertAndAdjustWallet inserts, then adjusts; a conflict leaves the wallet alone and the transaction usable', async () => {
    const { env } = await seedEnvironment(s(), { walletBalance: '100' });
    const balance = async (): Promise<string | undefined> => (await s().read((tx) => tx.tenants.getEnvironment(env.id)))?.walletBalance;
    const first = payoutRecord(env, { thirdPartyId: 'withdrawal-1', amount: '25.5' });
    expect(await s().transaction((tx) => tx.transactions.insertAndAdjustWallet(first, '-25.5'))).toBe('74.5');
    expect(await s().read((tx) => tx.transactions.get(env.id, first.id))).toEqual(first);
    // Refused by the wallet: null, with the row in the transaction (the caller throws to undo it).
    const big = payoutRecord(env, { amount: '75' });
    await expect(
      s().transaction(async (tx) => {
        expect(await tx.transactions.insertAndAdjustWallet(big, '-75')).toBeNull();
        expect(await tx.transactions.get(env.id, big.id)).toEqual(big);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await s().read((tx) => tx.transactions.get(env.id, big.id))).toBeNull();
    // A taken thirdPartyId or id: the store's UniqueViolation, the wallet untouched, the transaction goes on.
    const later = payoutRecord(env, { amount: '1' });
    await s().transaction(async (tx) => {
      await expectUnique(tx.transactions.insertAndAdjustWallet(payoutRecord(env, { thirdPartyId: 'withdrawal-1' }), '-1'), 'third_party_id');
      await expectUnique(tx.transactions.insertAndAdjustWallet({ ...first, thirdPartyId: 'other' }, '-1'), 'primary_key');
      expect(await tx.transactions.insertAndAdjustWallet(later, '-1')).toBe('73.5');
    });
    expect(await balance()).toBe('73.5');
    expect(await s().read((tx) => tx.transactions.get(env.id, later.id))).toEqual(later);
  });

  it('round-trips transactions with every field, exactly', async () => {
    const { env } = await seedEnvironment(s());
    const payout = payoutRecord(env, { amount: '1234567.12345678', completedAt: null });
    const staking = payoutRecord(env, { type: 'staking', status: 'active', durationInMonths: 12, amount: '250', asset: 'ETH' });
    const payment = paymentRecord(env, { amount: '0.00000001', amountBaseUnits: '10000000000', verified: true });
    // A payment of an order whose base units do not fit an Amount: no amount, exact base units.
    const wei = paymentRecord(env, { amount: null, amountBaseUnits: '123456789012345678901234567890', verified: true });
    const refund = paymentRecord(env, { type: 'refund', side: 'debit', status: 'completed', verified: null, refundEmail: 'buyer@example.com', completedAt: T0 + 5 });
    await s().transaction(async (tx) => {
      for (const t of [payout, staking, payment, wei, refund]) await tx.transactions.insert(t);
    });
    await s().transaction(async (tx) => {
      for (const t of [payout, staking, payment, wei, refund]) expect(await tx.transactions.get(env.id, t.id)).toEqual(t);
      expect(await tx.transactions.get(env.id, 'txn_unknown')).toBeNull();
      expect(await tx.transactions.findByThirdPartyId(env.id, 'payout', payout.thirdPartyId!)).toEqual(payout);
      expect(await tx.transactions.findByThirdPartyId(env.id, 'staking', payout.thirdPartyId!)).toBeNull();
    });
  });

  it('thirdPartyId is unique per environment and type, and transactions without one never collide', async () => {
    const { env } = await seedEnvironment(s());
    const other = (await seedEnvironment(s())).env;
    const first = payoutRecord(env, { thirdPartyId: 'withdrawal-77812' });
    await s().transaction((tx) => tx.transactions.insert(first));
    await expectUnique(s().transaction((tx) => tx.transactions.insert(payoutRecord(env, { thirdPartyId: 'withdrawal-77812' }))), 'third_party_id');
    await s().transaction(async (tx) => {
      await tx.transactions.insert(payoutRecord(env, { type: 'staking', status: 'active', thirdPartyId: 'withdrawal-77812' }));
      await tx.transactions.insert(payoutRecord(other, { thirdPartyId: 'withdrawal-77812' }));
      await tx.transactions.insert(paymentRecord(env));
      await tx.transactions.insert(paymentRecord(env));
    });
    await expectUnique(s().transaction((tx) => tx.transactions.insert({ ...first, thirdPartyId: 'other' })), 'primary_key');
  });

  it('concurrent inserts of one thirdPartyId: exactly one succeeds', async () => {
    const { env } = await seedEnvironment(s());
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () =>
        s().transaction(async (tx) => {
          await tx.transactions.findByThirdPartyId(env.id, 'payout', 'withdrawal-race');
          await new Promise((r) => setTimeout(r, 5));
          await tx.transactions.insert(payoutRecord(env, { thirdPartyId: 'withdrawal-race' }));
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') await expectUnique(Promise.reject(r.reason), 'third_party_id');
  });

  it('a transaction that throws leaves nothing behind and skips its afterCommit callbacks', async () => {
    const { tenant, env } = await seedEnvironment(s(), { walletBalance: '100' });
    const payout = payoutRecord(env);
    const event = eventRecord(env);
    const boom = new Error('boom');
    let ran = false;
    await expect(
      s().transaction(async (tx) => {
        await tx.tenants.insertTenant({ id: `${tenant.id}x`, name: 'Ghost', createdAt: T0 });
        await tx.transactions.insert(payout);
        expect(await tx.tenants.adjustWallet(env.id, '-25.5')).toBe('74.5');
        await tx.events.insert(event);
        tx.afterCommit(() => {
          ran = true;
        });
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(ran).toBe(false);
    await s().transaction(async (tx) => {
      expect(await tx.tenants.getTenant(`${tenant.id}x`)).toBeNull();
      expect(await tx.transactions.get(env.id, payout.id)).toBeNull();
      expect(await tx.events.get(env.id, event.id)).toBeNull();
      expect((await tx.tenants.getEnvironment(env.id))?.walletBalance).toBe('100');
    });
  });

  it('commits, then runs afterCommit callbacks in order, and returns the value', async () => {
    const { env } = await seedEnvironment(s());
    const seen: string[] = [];
    const value = await s().transaction(async (tx) => {
      tx.afterCommit(() => seen.push('first'));
      tx.afterCommit(() => seen.push('second'));
      await tx.transactions.insert(payoutRecord(env));
      expect(seen).toEqual([]);
      return 42;
    });
    expect(value).toBe(42);
    expect(seen).toEqual(['first', 'second']);
  });

  it('a UniqueViolation caught inside a transaction leaves the transaction usable', async () => {
    const { env } = await seedEnvironment(s());
    const a = payoutRecord(env);
    const c = payoutRecord(env);
    await s().transaction(async (tx) => {
      await tx.transactions.insert(a);
      await expectUnique(tx.transactions.insert(payoutRecord(env, { thirdPartyId: a.thirdPartyId })), 'third_party_id');
      expect(await tx.transactions.findByThirdPartyId(env.id, 'payout', a.thirdPartyId!)).toEqual(a);
      await tx.transactions.insert(c);
    });
    await s().transaction(async (tx) => {
      expect(await tx.transactions.get(env.id, a.id)).toEqual(a);
      expect(await tx.transactions.get(env.id, c.id)).toEqual(c);
    });
  });

  it('updateStatus is guarded by the expected current status', async () => {
    const { env } = await seedEnvironment(s());
    const payout = payoutRecord(env);
    const payment = paymentRecord(env, { status: 'completed', completedAt: T0 + 100 });
    await s().transaction(async (tx) => {
      await tx.transactions.insert(payout);
      await tx.transactions.insert(payment);
    });
    await s().transaction(async (tx) => {
      expect(await tx.transactions.updateStatus(env.id, payout.id, 'completed', 'cancelled', null)).toBe(false);
      expect(await tx.transactions.updateStatus(env.id, payout.id, 'pending', 'completed', T0 + 60_000)).toBe(true);
      expect(await tx.transactions.updateStatus(env.id, payout.id, 'pending', 'cancelled', null)).toBe(false);
      // A null completedAt keeps the recorded one; the refund email is stored when given.
      expect(await tx.transactions.updateStatus(env.id, payment.id, 'completed', 'refunded', null, { refundEmail: 'buyer@example.com' })).toBe(true);
      expect(await tx.transactions.updateStatus(env.id, 'txn_unknown', 'pending', 'completed', T0)).toBe(false);
    });
    await s().transaction(async (tx) => {
      expect(await tx.transactions.get(env.id, payout.id)).toEqual({ ...payout, status: 'completed', completedAt: T0 + 60_000 });
      expect(await tx.transactions.get(env.id, payment.id)).toEqual({ ...payment, status: 'refunded', refundEmail: 'buyer@example.com' });
    });
  });

  it('transactionsVersion moves when a commit changed the environment\'s transactions, before the writer hears of it, and not for reads or writes that changed none of them', async () => {
    const { env } = await seedEnvironment(s(), { walletBalance: '100' });
    const other = (await seedEnvironment(s())).env;
    const version = (): string | null => s().transactionsVersion(env.id);
    const v0 = version();
    if (v0 === null) {
      // Stores whose other instances write to the same database cannot tell cheaply.
      expect(s().kind).toBe('postgres');
      return;
    }
    const payout = payoutRecord(env);
    await s().transaction((tx) => tx.transactions.insert(payout));
    const v1 = version();
    expect(v1).not.toBe(v0);
    // Unchanged by reads, by writes elsewhere, by a write that did not go in.
    await s().read((tx) => tx.transactions.listByUser(env.id, payout.userId!, { limit: 10, cursor: null }));
    await s().transaction((tx) => tx.transactions.insert(payoutRecord(other)));
    await s().transaction((tx) => tx.tenants.adjustWallet(env.id, '-1'));
    await s().transaction(async (tx) => {
      await expectUnique(tx.transactions.insert({ ...payoutRecord(env), thirdPartyId: payout.thirdPartyId }), 'third_party_id');
      expect(await tx.transactions.updateStatus(env.id, payout.id, 'completed', 'cancelled', null)).toBe(false);
    });
    expect(version()).toBe(v1);
    // Moved by a status change and by insertAndAdjustWallet, by the time the transaction returns.
    await s().transaction((tx) => tx.transactions.updateStatus(env.id, payout.id, 'pending', 'completed', T0 + 1));
    const v2 = version();
    expect(v2).not.toBe(v1);
    await s().transaction((tx) => tx.transactions.insertAndAdjustWallet(payoutRecord(env), '-1'));
    expect(version()).not.toBe(v2);
  });

  it('listByUser is newest first, honours the limit and the transactionId filter', async () => {
    const { env } = await seedEnvironment(s());
    const mine = [0, 1, 2, 3].map((i) => payoutRecord(env, { userId: 'user-1001', createdAt: T0 + i * 1000 }));
    const theirs = payoutRecord(env, { userId: 'user-2002', createdAt: T0 + 10_000 });
    await s().transaction(async (tx) => {
      for (const t of [mine[2]!, mine[0]!, theirs, mine[3]!, mine[1]!]) await tx.transactions.insert(t);
    });
    await s().transaction(async (tx) => {
      const ids = (page: { items: { id: string }[] }) => page.items.map((r) => r.id);
      const list = (opts: { limit: number; transactionId?: string; cursor?: string | null }, userId = 'user-1001') =>
        tx.transactions.listByUser(env.id, userId, { cursor: null, ...opts });
      expect(ids(await list({ limit: 10 }))).toEqual([3, 2, 1, 0].map((i) => mine[i]!.id));
      expect(ids(await list({ limit: 2 }))).toEqual([mine[3]!.id, mine[2]!.id]);
      expect(await list({ limit: 10, transactionId: mine[1]!.id })).toEqual({ items: [mine[1]], nextCursor: null });
      expect(await list({ limit: 10, transactionId: theirs.id })).toEqual({ items: [], nextCursor: null });
      expect(await list({ limit: 10 }, 'user-9999')).toEqual({ items: [], nextCursor: null });
    });
  });

  it('listByUser pages with an opaque cursor: every row once, newest first, unshifted by later rows', async () => {
    const { env } = await seedEnvironment(s());
    // Two rows per millisecond, inserted out of order: the cursor must break ties like the order does.
    const mine = [0, 1, 2, 3, 4, 5, 6].map((i) => payoutRecord(env, { userId: 'user-3003', createdAt: T0 + Math.floor(i / 2) * 1000 }));
    await s().transaction(async (tx) => {
      for (const i of [4, 0, 6, 2, 1, 5, 3]) await tx.transactions.insert(mine[i]!);
    });
    const all = await s().transaction((tx) => tx.transactions.listByUser(env.id, 'user-3003', { limit: 100, cursor: null }));
    expect(all.nextCursor).toBeNull();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Page<TransactionRecord> = await s().transaction((tx) => tx.transactions.listByUser(env.id, 'user-3003', { limit: 3, cursor }));
      seen.push(...page.items.map((t) => t.id));
      cursor = page.nextCursor;
      if (++pages === 1) {
        // A newer row after the first page does not shift the next pages.
        await s().transaction((tx) => tx.transactions.insert(payoutRecord(env, { userId: 'user-3003', createdAt: T0 + 60_000 })));
      }
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(all.items.map((t) => t.id));
    expect(new Set(seen).size).toBe(7);

    // A cursor for another user's list, a tampered one and garbage are refused.
    const first = await s().transaction((tx) => tx.transactions.listByUser(env.id, 'user-3003', { limit: 1, cursor: null }));
    for (const bad of [first.nextCursor!, 'not-a-cursor', `${first.nextCursor!}A`, 'MA']) {
      const user = bad === first.nextCursor ? 'user-4004' : 'user-3003';
      await expect(s().transaction((tx) => tx.transactions.listByUser(env.id, user, { limit: 3, cursor: bad }))).rejects.toBeInstanceOf(InvalidCursorError);
    }
  });

  it('search finds the most recent match by orderNumber, txHash, or both; listByOrder is oldest first', async () => {
    const { env } = await seedEnvironment(s());
    const orderId = '0b6e3c1d-2f4a-4c8e-9d7b-5a1f3e2c4b6d';
    const h1 = `0x${'1a'.repeat(32)}`;
    const h2 = `0x${'2b'.repeat(32)}`;
    const older = paymentRecord(env, { orderId, orderNumber: 'ORD-000007', txHash: h1, createdAt: T0 });
    const newer = paymentRecord(env, { orderId, orderNumber: 'ORD-000007', txHash: h2, createdAt: T0 + 1000 });
    const unrelated = paymentRecord(env, { orderId: null, orderNumber: 'ORD-000008', txHash: `0x${'3c'.repeat(32)}`, createdAt: T0 + 2000 });
    await s().transaction(async (tx) => {
      for (const t of [newer, unrelated, older]) await tx.transactions.insert(t);
    });
    await s().transaction(async (tx) => {
      expect(await tx.transactions.search(env.id, { orderNumber: 'ORD-000007' })).toEqual(newer);
      expect(await tx.transactions.search(env.id, { txHash: h1 })).toEqual(older);
      expect(await tx.transactions.search(env.id, { orderNumber: 'ORD-000007', txHash: h1 })).toEqual(older);
      expect(await tx.transactions.search(env.id, { orderNumber: 'ORD-000008', txHash: h1 })).toBeNull();
      expect(await tx.transactions.search(env.id, { orderNumber: 'ORD-999999' })).toBeNull();
      expect(await tx.transactions.listByOrder(env.id, orderId)).toEqual([older, newer]);
      expect(await tx.transactions.listByOrder(env.id, '00000000-0000-4000-8000-000000000000')).toEqual([]);
    });
  });

  it('order numbers increase per environment and are independent across environments', async () => {
    const a = (await seedEnvironment(s())).env;
    const b = (await seedEnvironment(s())).env;
    const next = (envId: string) => s().transaction((tx) => tx.orders.nextOrderNumber(envId));
    expect(await next(a.id)).toBe('ORD-000001');
    expect(await next(a.id)).toBe('ORD-000002');
    expect(await next(b.id)).toBe('ORD-000001');
    expect(await next(a.id)).toBe('ORD-000003');
    const many = await Promise.all(Array.from({ length: 10 }, () => next(b.id)));
    expect(new Set(many).size).toBe(10);
    expect([...many].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `ORD-${String(i + 2).padStart(6, '0')}`));
  });

  it('orders round-trip, update, and order numbers are unique per environment', async () => {
    const { env } = await seedEnvironment(s());
    const other = (await seedEnvironment(s())).env;
    const order = orderRecord(env, 'ORD-000001');
    await s().transaction((tx) => tx.orders.insert(order));
    expect(await s().transaction((tx) => tx.orders.get(env.id, order.id))).toEqual(order);
    const paid = {
      ...order,
      receivedBaseUnits: '50000000',
      overpaymentBaseUnits: '10000',
      paymentStatus: 'review_required' as const,
      reviewReason: 'late_or_missing_inclusion' as const,
      updatedAt: T0 + 90_000,
    };
    await s().transaction((tx) => tx.orders.update(paid));
    expect(await s().transaction((tx) => tx.orders.get(env.id, order.id))).toEqual(paid);
    await expectUnique(s().transaction((tx) => tx.orders.insert(orderRecord(env, 'ORD-000001'))), 'order_number');
    await s().transaction((tx) => tx.orders.insert(orderRecord(other, 'ORD-000001')));
  });

  it('idempotency keys: recorded once per environment, found again, a second insert is a UniqueViolation', async () => {
    const { env } = await seedEnvironment(s());
    const other = (await seedEnvironment(s())).env;
    const order = orderRecord(env, 'ORD-000001');
    const theirs = orderRecord(other, 'ORD-000001');
    const record = { orderId: order.id, requestHash: 'a'.repeat(64), createdAt: T0 };
    await s().transaction(async (tx) => {
      await tx.orders.insert(order);
      await tx.orders.insertIdempotencyKey(env.id, 'key-1', record);
    });
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(env.id, 'key-1'))).toEqual(record);
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(env.id, 'KEY-1'))).toBeNull();
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(other.id, 'key-1'))).toBeNull();
    await expectUnique(s().transaction((tx) => tx.orders.insertIdempotencyKey(env.id, 'key-1', { ...record, requestHash: 'b'.repeat(64) })), 'idempotency_key');
    // Another environment has its own keys.
    await s().transaction(async (tx) => {
      await tx.orders.insert(theirs);
      await tx.orders.insertIdempotencyKey(other.id, 'key-1', { ...record, orderId: theirs.id });
    });
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(env.id, 'key-1'))).toEqual(record);
  });

  it('concurrent inserts of one idempotency key: exactly one succeeds', async () => {
    const { env } = await seedEnvironment(s());
    const orders = [1, 2, 3, 4].map((i) => orderRecord(env, `ORD-00000${i}`));
    const results = await Promise.allSettled(
      orders.map((o) =>
        s().transaction(async (tx) => {
          await tx.orders.insert(o);
          await tx.orders.insertIdempotencyKey(env.id, 'race', { orderId: o.id, requestHash: 'c'.repeat(64), createdAt: T0 });
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as UniqueViolation).constraint).toBe('idempotency_key');
    const winner = await s().read((tx) => tx.orders.findIdempotencyKey(env.id, 'race'));
    expect(orders.map((o) => o.id)).toContain(winner?.orderId);
  });
}
