// Store.createOrder: a new order numbered and written with its event and the event's delivery,
// under an idempotency key decided by the store's unique key, one order failing alone.
import { expect, it } from 'vitest';
import type { OrderCreation, Store } from '../../domain/store.ts';
import type { EnvironmentRecord } from '../../domain/model.ts';
import { newDeliveryId, newEventId } from '../../domain/ids.ts';
import { deliveryRecord, endpointRecord, eventRecord, expectUnique, orderRecord, seedEnvironment } from './fixtures.ts';
import { until } from '../../../testing/until.ts';
import { fanOutDeliveryId } from '../fan-out.ts';

/** A creation of a new order of env (fresh ids), under `key` when given. */
export function orderCreation(env: EnvironmentRecord, key: string | null = null): OrderCreation {
  const { orderNumber: _, ...order } = orderRecord(env, 'unnumbered');
  const event = eventRecord(env, { id: newEventId(), orderId: order.id, merchantReference: order.merchantReference });
  const { endpointId: __, endpointVersion: ___, url: ____, ...delivery } = deliveryRecord(event, null, { id: newDeliveryId(), kind: 'order_event' });
  return { order, event, delivery, idempotency: key === null ? null : { key, requestHash: 'a'.repeat(64) } };
}

/** What the store holds of a creation: its order, event and delivery (null where absent). */
async function stored(store: Store, c: OrderCreation) {
  return store.read(async (tx) => ({
    order: await tx.orders.get(c.order.environmentId, c.order.id),
    event: await tx.events.get(c.order.environmentId, c.event.id),
    delivery: await tx.deliveries.get(c.order.environmentId, c.delivery.id),
  }));
}

export function orderCreationCases(s: () => Store): void {
  it('createOrder numbers the order and writes it with its event; the delivery only to an active endpoint; the listeners hear of both', async () => {
    const { env } = await seedEnvironment(s());
    const events: string[] = [];
    let ready = 0;
    const stops = [s().onEventsRecorded((id) => events.push(id)), s().onDeliveriesReady(() => ready++)];
    const alone = orderCreation(env);
    const first = await s().createOrder(alone);
    if (!first.created) throw new Error('not created');
    expect(first).toEqual({ created: true, order: { ...alone.order, orderNumber: expect.stringMatching(/^ORD-\d{6}$/) }, delivery: false });
    expect(await stored(s(), alone)).toEqual({ order: first.order, event: alone.event, delivery: null });
    await until(() => events.length === 1, 'events.length === 1');
    expect(ready).toBe(0);

    const ep = endpointRecord(env, { url: 'https://hooks.northwind.example/v2', version: 2 });
    await s().transaction((tx) => tx.endpoints.insert(ep));
    const sent = orderCreation(env);
    const second = await s().createOrder(sent);
    if (!second.created) throw new Error('not created');
    expect(second.delivery).toBe(true);
    expect(second.order.orderNumber > first.order.orderNumber).toBe(true);
    expect((await stored(s(), sent)).delivery).toEqual({ ...sent.delivery, endpointId: ep.id, endpointVersion: 2, url: ep.url });
    await until(() => events.length === 2 && ready === 1, 'events.length === 2 && ready === 1');
    expect(events).toEqual([env.id, env.id]);
    for (const stop of stops) stop();
  });

  it('createOrder fans out, alone and in batches, with and without keys: one delivery per active endpoint taking order.created', async () => {
    const { env } = await seedEnvironment(s());
    const bare = (await seedEnvironment(s())).env;
    const every = endpointRecord(env, { url: 'https://hooks.northwind.example/every' });
    const created = endpointRecord(env, { url: 'https://hooks.northwind.example/created', eventTypes: ['order.created', 'order.paid'], version: 3 });
    const paidOnly = endpointRecord(env, { url: 'https://hooks.northwind.example/paid', eventTypes: ['order.paid'] });
    const disabled = endpointRecord(env, { url: 'https://hooks.northwind.example/old', active: false, disabledAt: 1 });
    await s().transaction(async (tx) => {
      for (const e of [every, created, paidOnly, disabled]) await tx.endpoints.insert(e);
    });
    const targets = [every, created].sort((a, b) => (a.id < b.id ? -1 : 1));
    // Submitted together, so the group commit may batch them (bulk paths), some under keys.
    const creations = Array.from({ length: 12 }, (_, i) => orderCreation(i % 4 === 3 ? bare : env, i % 3 === 0 ? `fan-key-${i}` : null));
    const results = await Promise.all(creations.map((c) => s().createOrder(c)));
    for (const [i, c] of creations.entries()) {
      const r = results[i]!;
      if (!r.created) throw new Error(`order ${i} not created`);
      const { items } = await s().read((tx) => tx.deliveries.list(c.order.environmentId, { q: c.order.id, limit: 10, cursor: null }));
      const got = [...items].sort((a, b) => (a.endpointId! < b.endpointId! ? -1 : 1));
      if (c.order.environmentId === bare.id) {
        expect([r.delivery, got]).toEqual([false, []]);
        continue;
      }
      expect(r.delivery).toBe(true);
      expect(got).toEqual(
        targets.map((ep, rank) => ({ ...c.delivery, id: fanOutDeliveryId(c.delivery.id, ep.id, rank + 1), endpointId: ep.id, endpointVersion: ep.version, url: ep.url })),
      );
    }
  });

  it('createOrder under a key already recorded in the environment writes nothing and says so; another environment has its own keys', async () => {
    const { env, tenant } = await seedEnvironment(s());
    const { env: live } = await seedEnvironment(s(), { tenant, name: 'live' });
    const first = orderCreation(env, 'key-1');
    expect((await s().createOrder(first)).created).toBe(true);
    const again = orderCreation(env, 'key-1');
    expect(await s().createOrder(again)).toEqual({ created: false });
    expect(await stored(s(), again)).toEqual({ order: null, event: null, delivery: null });
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(env.id, 'key-1'))).toEqual({ orderId: first.order.id, requestHash: 'a'.repeat(64), createdAt: first.order.createdAt });
    const elsewhere = orderCreation(live, 'key-1');
    expect((await s().createOrder(elsewhere)).created).toBe(true);
    expect((await s().read((tx) => tx.orders.findIdempotencyKey(live.id, 'key-1')))?.orderId).toBe(elsewhere.order.id);
  });

  it('concurrent createOrder calls: one per key is created and the others write nothing; every keyless one is created, each number once, each event streamed once', async () => {
    const { env } = await seedEnvironment(s());
    await s().transaction((tx) => tx.endpoints.insert(endpointRecord(env)));
    const head = await s().read((tx) => tx.events.streamHead(env.id));
    const keyed = Array.from({ length: 6 }, (_, i) => orderCreation(env, i % 2 === 0 ? 'even' : 'odd'));
    const keyless = Array.from({ length: 6 }, () => orderCreation(env));
    const all = [...keyed, ...keyless].sort(() => Math.random() - 0.5);
    const results = await Promise.all(all.map((c) => s().createOrder(c)));
    const created = all.filter((_, i) => results[i]!.created);
    expect(created).toHaveLength(8);
    expect(keyless.every((c) => created.includes(c))).toBe(true);
    for (const key of ['even', 'odd']) {
      const winners = created.filter((c) => c.idempotency?.key === key);
      expect(winners).toHaveLength(1);
      expect((await s().read((tx) => tx.orders.findIdempotencyKey(env.id, key)))?.orderId).toBe(winners[0]!.order.id);
    }
    for (const c of all) {
      const row = await stored(s(), c);
      const won = created.includes(c);
      expect([row.order !== null, row.event !== null, row.delivery !== null]).toEqual([won, won, won]);
    }
    const numbers = results.flatMap((r) => (r.created ? [r.order.orderNumber] : []));
    expect(new Set(numbers).size).toBe(8);
    const streamed = await until(async () => {
      const ids = (await s().read((tx) => tx.events.streamAfter(env.id, { cursor: head, types: [], limit: 100 }))).map((e) => e.event.id);
      return ids.length === 8 && ids;
    }, 'the 8 events in the stream');
    expect([...streamed].sort()).toEqual(created.map((c) => c.event.id).sort());
  });

  it('a createOrder that breaks a rule of the store fails alone and writes nothing; those beside it are created', async () => {
    const { env } = await seedEnvironment(s());
    const existing = orderCreation(env);
    await s().createOrder(existing);
    // Its order id is taken: the order (and so its event and delivery) cannot go in.
    const clash = { ...orderCreation(env, 'clash'), order: { ...orderCreation(env).order, id: existing.order.id } };
    const [a, b] = [orderCreation(env, 'a'), orderCreation(env)];
    const results = await Promise.allSettled([s().createOrder(a), s().createOrder(clash), s().createOrder(b)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await expectUnique(Promise.reject((results[1] as PromiseRejectedResult).reason), 'primary_key');
    expect(await stored(s(), clash)).toEqual({ order: (await stored(s(), existing)).order, event: null, delivery: null });
    expect(await s().read((tx) => tx.orders.findIdempotencyKey(env.id, 'clash'))).toBeNull();
    for (const c of [a, b]) expect((await stored(s(), c)).event).toEqual(c.event);
  });
}
