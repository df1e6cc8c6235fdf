// The PostgreSQL group commit through the real store: transactions submitted together share one
// database transaction, each unit fails alone, and nobody is answered before the COMMIT.
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { eventRecord, payoutRecord, seedEnvironment } from '../suite/fixtures.ts';
import { orderCreation } from '../suite/order-creation-cases.ts';
import { createOrderIn } from '../create-order.ts';
import { UniqueViolation } from '../../domain/store.ts';
import { PgGroupCommitter, type BulkStatement } from './group-commit.ts';
import { CallCancelled } from '../../domain/store-errors.ts';
import { openPostgresStore, type PostgresStore } from './store.ts';
import { createTestDatabase, type TestDatabase } from './testing.ts';
import { until } from '../../../testing/until.ts';

describe('PostgreSQL group commit', () => {
  let db: TestDatabase | null = null;
  let store: PostgresStore | null = null;
  let raw: pg.Pool | null = null;

  afterEach(async () => {
    await store?.close();
    await raw?.end();
    await db?.drop();
    store = null;
    raw = null;
    db = null;
  });

  const open = async (): Promise<PostgresStore> => {
    db = await createTestDatabase();
    store = await openPostgresStore({ connectionString: db.url, poolSize: 8, log: pino({ level: 'silent' }) });
    await store.migrate();
    raw = new pg.Pool({ connectionString: db.url, max: 2 });
    // Connections still closing when the database is dropped report an error: expected.
    raw.on('error', () => undefined);
    return store;
  };

  it('runs transactions submitted together in one batch; a failing unit rolls back alone, a duplicate loses to a winner of the same batch', async () => {
    const s = await open();
    const { env } = await seedEnvironment(s, { walletBalance: '10' });
    const before = { ...s.committer.stats };
    const p = (thirdPartyId: string) => payoutRecord(env, { thirdPartyId, amount: '1' });
    const [a, b, dup, c] = [p('a'), p('b'), p('a'), p('c')];
    const committedCallbacks: string[] = [];
    const pay = (rec: typeof a, fail = false) =>
      s.transaction(async (tx) => {
        await tx.transactions.insert(rec);
        await tx.tenants.adjustWallet(env.id, '-1');
        tx.afterCommit(() => committedCallbacks.push(rec.id));
        if (fail) throw new Error('refused after writing');
        return rec.id;
      });
    const results = await Promise.allSettled([pay(a), pay(b, true), pay(dup), pay(c)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toHaveProperty('message', 'refused after writing');
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(UniqueViolation);
    // One batch, one COMMIT for all four.
    expect(s.committer.stats.batches - before.batches).toBe(1);
    expect(s.committer.stats.units - before.units).toBe(4);
    expect(committedCallbacks.sort()).toEqual([a.id, c.id].sort());
    // Only a's and c's writes stand, the winner of the duplicate included.
    expect((await s.read((tx) => tx.tenants.getEnvironment(env.id)))?.walletBalance).toBe('8');
    expect((await s.read((tx) => tx.transactions.findByThirdPartyId(env.id, 'payout', 'a')))?.id).toBe(a.id);
    expect(await s.read((tx) => tx.transactions.get(env.id, b.id))).toBeNull();
  });

  /** A unit that records an event and holds its batch open until released. */
  const held = (s: PostgresStore, env: Parameters<typeof eventRecord>[0]) => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = false;
    const done = s.transaction(async (tx) => {
      await tx.events.insert(eventRecord(env));
      started = true;
      await gate;
    });
    return { done, release, started: () => until(() => started, 'the held unit to start') };
  };
  const eventCount = async (envId: string): Promise<number> =>
    (await raw!.query('SELECT count(*)::int AS n FROM events WHERE environment_id = $1', [envId])).rows[0].n;

  it('after a run of batches that changed no transactions, a second batch executes beside a slow one and commits first', async () => {
    const s = await open();
    const { env } = await seedEnvironment(s);
    for (let i = 0; i < 8; i++) await s.transaction((tx) => tx.events.insert(eventRecord(env)));
    const slow = held(s, env);
    await slow.started();
    await s.transaction((tx) => tx.events.insert(eventRecord(env)));
    // 8 + the fast one; the slow one is not committed yet.
    expect(await eventCount(env.id)).toBe(9);
    slow.release();
    await slow.done;
    expect(await eventCount(env.id)).toBe(10);
  });

  it('after a batch that changed transactions (hot rows such as the wallet), batches execute one at a time', async () => {
    const s = await open();
    const { env } = await seedEnvironment(s, { walletBalance: '10' });
    for (let i = 0; i < 8; i++) await s.transaction((tx) => tx.events.insert(eventRecord(env)));
    await s.transaction(async (tx) => {
      await tx.transactions.insert(payoutRecord(env, { thirdPartyId: 'hot', amount: '1' }));
      await tx.tenants.adjustWallet(env.id, '-1');
    });
    const slow = held(s, env);
    await slow.started();
    let fastDone = false;
    const fast = s.transaction((tx) => tx.events.insert(eventRecord(env))).then(() => (fastDone = true));
    // The fast unit waits in the queue: the one batch loop executes the slow unit, and a second
    // loop starts only when a unit is queued (enqueue decides there and then).
    await until(() => s.committer.queued === 1, 'the fast unit queued');
    expect(s.committer.loops).toBe(1);
    expect(fastDone).toBe(false);
    const batches = s.committer.stats.batches;
    slow.release();
    await Promise.all([slow.done, fast]);
    // Two batches, one after the other: it did not join the slow one either.
    expect(s.committer.stats.batches - batches).toBe(2);
    expect(await eventCount(env.id)).toBe(10);
  });

  it('answers a caller only once its batch is committed, a failed one too', async () => {
    const s = await open();
    const { env } = await seedEnvironment(s);
    const winner = payoutRecord(env, { thirdPartyId: 'w' });
    const loser = payoutRecord(env, { thirdPartyId: 'w' });
    const seenByOthers = async (): Promise<boolean> => (await raw!.query('SELECT 1 FROM transactions WHERE id = $1', [winner.id])).rowCount === 1;
    const ok = s.transaction((tx) => tx.transactions.insert(winner)).then(seenByOthers);
    // The loser is told of the duplicate after the winner is committed: it can read the winner.
    const lost = s.transaction((tx) => tx.transactions.insert(loser)).then(
      () => 'inserted',
      async (err: unknown) => (err instanceof UniqueViolation && (await seenByOthers()) ? 'winner visible' : String(err)),
    );
    expect(await ok).toBe(true);
    expect(await lost).toBe('winner visible');
  });

  it('fails only the unit that caught a database error and went on; the rest of the batch commits', async () => {
    const s = await open();
    const { env } = await seedEnvironment(s);
    const kept = payoutRecord(env);
    const spoilt = payoutRecord(env);
    const results = await Promise.allSettled([
      s.transaction(async (tx) => {
        await tx.transactions.insert(spoilt);
        // Not a bigint: the statement fails and aborts the unit's subtransaction.
        await tx.transactions.updateStatus(env.id, spoilt.id, 'pending', 'completed', Number.NaN).catch(() => undefined);
      }),
      s.transaction((tx) => tx.transactions.insert(kept)),
    ]);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/rolled back/) } });
    expect(results[1]?.status).toBe('fulfilled');
    expect(await s.read((tx) => tx.transactions.get(env.id, spoilt.id))).toBeNull();
    expect((await s.read((tx) => tx.transactions.get(env.id, kept.id)))?.id).toBe(kept.id);
  });

  it('fails every unit of a batch whose connection dies, the ones that had succeeded too, and commits none', async () => {
    const s = await open();
    const { env } = await seedEnvironment(s);
    const first = payoutRecord(env);
    const second = payoutRecord(env);
    const results = await Promise.allSettled([
      s.transaction((tx) => tx.transactions.insert(first)),
      s.transaction(async (tx) => {
        // The batch's connection, idle inside its transaction after the first unit: cut it.
        const killed = await raw!.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'",
        );
        expect(killed.rowCount).toBe(1);
        await tx.transactions.insert(second);
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await s.read((tx) => tx.transactions.get(env.id, first.id))).toBeNull();
    // The store goes on with a fresh connection.
    await s.transaction((tx) => tx.transactions.insert(second));
    expect((await s.read((tx) => tx.transactions.get(env.id, second.id)))?.id).toBe(second.id);
  });

  it('answers a batch that changed transactions only after its notification; one that only queued deliveries before it', async () => {
    db = await createTestDatabase();
    raw = new pg.Pool({ connectionString: db.url, max: 2 });
    raw.on('error', () => undefined);
    let sent: () => void = () => undefined;
    const notified: { deliveries: boolean; changed: string[] }[] = [];
    const committer = new PgGroupCommitter(raw, {
      log: pino({ level: 'silent' }),
      notify: (deliveries, changed) => {
        notified.push({ deliveries, changed: [...changed] });
        return new Promise<void>((resolve) => (sent = resolve));
      },
    });
    const unit = (touched: ReadonlySet<string> | null) => async (client: pg.PoolClient) => {
      await client.query('SELECT 1');
      return { value: 'done', notify: true, touched, committed: () => undefined };
    };

    // Answered while its notification is still on its way (the old order hung here).
    expect(await committer.submit(unit(null))).toBe('done');
    expect(notified).toEqual([{ deliveries: true, changed: [] }]);
    sent();

    let answered = false;
    const changed = committer.submit(unit(new Set(['env-1']))).finally(() => (answered = true));
    // The notification is on its way and not yet sent: once it has begun, and the event loop
    // has turned, the writer still waits for it.
    await until(() => notified.length === 2, 'the second notification');
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    expect(notified[1]).toEqual({ deliveries: true, changed: ['env-1'] });
    sent();
    expect(await changed).toBe('done');
  });

  it('a batch takes the units queued when it begins; one arriving while it executes goes to the next batch', async () => {
    db = await createTestDatabase();
    raw = new pg.Pool({ connectionString: db.url, max: 4 });
    raw.on('error', () => undefined);
    const committer = new PgGroupCommitter(raw, { log: pino({ level: 'silent' }), notify: async () => undefined });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (started = resolve));
    const unit = (hold: boolean) => async (client: pg.PoolClient) => {
      if (hold) {
        started();
        await gate;
      }
      await client.query('SELECT 1');
      return { value: hold, notify: false, touched: null, committed: () => undefined };
    };
    const together = [committer.submit(unit(true)), committer.submit(unit(false))];
    await first;
    const late = committer.submit(unit(false));
    release();
    await Promise.all([...together, late]);
    expect(committer.stats).toEqual({ batches: 2, units: 3, bulkUnits: 0 });
  });

  it('lone bulk statements take turns: at most two in flight, the second once as many units are queued as the first holds, a third once one ends, taking every unit queued then', async () => {
    db = await createTestDatabase();
    raw = new pg.Pool({ connectionString: db.url, max: 6 });
    raw.on('error', () => undefined);
    await raw.query('CREATE TABLE t (id text PRIMARY KEY)');
    const committer = new PgGroupCommitter(raw, { log: pino({ level: 'silent' }), notify: async () => undefined });
    // Each statement waits at its gate, which the test opens, before it writes its units.
    const statements: { ids: string[]; open: () => void }[] = [];
    let gated = false;
    let inFlight = 0;
    let mostInFlight = 0;
    const kind: BulkStatement<string, string> = {
      async run(client, ids) {
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        try {
          if (gated) await new Promise<void>((open) => statements.push({ ids: [...ids], open }));
          await client.query('INSERT INTO t SELECT unnest($1::text[])', [ids]);
          return ids.map((id) => ({ value: id, notify: false, touched: null, committed: () => undefined }));
        } finally {
          inFlight -= 1;
        }
      },
    };
    const alone = (id: string) => async (client: pg.PoolClient) => {
      await client.query('INSERT INTO t VALUES ($1)', [id]);
      return { value: id, notify: false, touched: null, committed: () => undefined };
    };
    const order = (id: string, signal?: AbortSignal) => committer.submitBulk(kind, id, alone(id), signal);
    // Batches run side by side only after a run of quiet ones (QUIET_BATCHES).
    for (let i = 0; i < 8; i++) await order(`warm-${i}`);
    gated = true;
    try {
      const first = [order('a1'), order('a2')];
      await until(() => statements.length === 1, 'the first statement in flight');
      // One unit queued while the first holds two: a second loop waits for its turn.
      const second = [order('b1')];
      await until(() => committer.awaitingTurn === 1, 'a loop waiting for its turn');
      expect(committer.queued).toBe(1);
      second.push(order('b2'));
      await until(() => statements.length === 2, 'the second statement in flight');
      // Two in flight: the next waits for one of them to end, however many units queue.
      const request = new AbortController();
      const cancelled = order('cancelled', request.signal);
      const third = ['c1', 'c2', 'c3'].map((id) => order(id));
      await until(() => committer.awaitingTurn === 1, 'a loop waiting for its turn');
      expect(committer.queued).toBe(4);
      // Answered while it waits: dropped from the queue, never written.
      request.abort();
      await expect(cancelled).rejects.toBeInstanceOf(CallCancelled);
      third.push(order('c4'));
      expect(statements.length).toBe(2);
      statements[0]!.open();
      await until(() => statements.length === 3, 'the third statement in flight');
      statements[1]!.open();
      statements[2]!.open();
      expect(await Promise.all([...first, ...second, ...third])).toEqual(['a1', 'a2', 'b1', 'b2', 'c1', 'c2', 'c3', 'c4']);
      expect(statements.map((x) => x.ids)).toEqual([['a1', 'a2'], ['b1', 'b2'], ['c1', 'c2', 'c3', 'c4']]);
      expect(mostInFlight).toBe(2);
      expect(committer.stats).toEqual({ batches: 11, units: 16, bulkUnits: 16 });
      expect((await raw.query<{ n: number }>("SELECT count(*)::int AS n FROM t WHERE id = 'cancelled'")).rows[0]!.n).toBe(0);
    } finally {
      // A failed expectation leaves no statement held (the pool could not end).
      gated = false;
      for (const x of statements) x.open();
    }
  });

  it('writes the new orders a batch holds with one statement, beside its other units; when that statement fails, each order runs alone and only the culprit fails', async () => {
    const s = await open();
    const { env } = await seedEnvironment(s, { walletBalance: '10' });
    let before = { ...s.committer.stats };
    const orders = Array.from({ length: 10 }, (_, i) => orderCreation(env, i % 2 === 0 ? `key-${i}` : null));
    const payouts = [payoutRecord(env), payoutRecord(env)];
    const pay = (p: (typeof payouts)[number]) => s.transaction((tx) => tx.transactions.insert(p));
    const results = await Promise.all([pay(payouts[0]!), ...orders.slice(0, 5).map((c) => s.createOrder(c)), pay(payouts[1]!), ...orders.slice(5).map((c) => s.createOrder(c))]);
    expect(results.filter((r) => r !== undefined).every((r) => r.created)).toBe(true);
    expect(s.committer.stats.batches - before.batches).toBe(1);
    expect(s.committer.stats.units - before.units).toBe(12);
    expect(s.committer.stats.bulkUnits - before.bulkUnits).toBe(10);
    for (const p of payouts) expect((await s.read((tx) => tx.transactions.get(env.id, p.id)))?.id).toBe(p.id);

    before = { ...s.committer.stats };
    const clash = { ...orderCreation(env), order: { ...orderCreation(env).order, id: orders[0]!.order.id } };
    const settled = await Promise.allSettled([clash, orderCreation(env, 'key-x'), orderCreation(env)].map((c) => s.createOrder(c)));
    expect(settled.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(s.committer.stats.batches - before.batches).toBe(1);
    expect(s.committer.stats.units - before.units).toBe(3);
    expect(s.committer.stats.bulkUnits - before.bulkUnits).toBe(0);
  });

  for (const ending of ['commits', 'rolls back'] as const) {
    it(`an order under a key another instance holds in an open transaction waits for it, and is ${ending === 'commits' ? 'not created when that transaction commits' : 'created when it rolls back'}`, async () => {
      const s = await open();
      const other = await openPostgresStore({ connectionString: db!.url, poolSize: 2, log: pino({ level: 'silent' }) });
      try {
        const { env } = await seedEnvironment(s);
        let release: () => void = () => undefined;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let held: () => void = () => undefined;
        const holding = new Promise<void>((resolve) => (held = resolve));
        const first = other.transaction(async (tx) => {
          await createOrderIn(tx, orderCreation(env, 'shared'));
          held();
          await gate;
          if (ending === 'rolls back') throw new Error('rolled back');
        });
        await holding;
        const second = orderCreation(env, 'shared');
        const answer = s.createOrder(second);
        // The bulk statement waits on the other transaction's uncommitted key.
        const waiting = async (): Promise<number> => (await raw!.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n;
        await until(async () => (await waiting()) === 1, 'the bulk statement waiting on a lock');
        release();
        await first.catch(() => undefined);
        expect((await answer).created).toBe(ending === 'rolls back');
        expect((await s.read((tx) => tx.orders.get(env.id, second.order.id))) !== null).toBe(ending === 'rolls back');
      } finally {
        await other.close();
      }
    });
  }
});
