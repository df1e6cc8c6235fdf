// Events, endpoints and deliveries (outside the queue).
import { expect, it } from 'vitest';
import { InvalidCursorError } from '../../domain/store-errors.ts';
import type { Store } from '../../domain/store.ts';
import type { EndpointRecord, EventRecord, EventType } from '../../domain/model.ts';
import { newDeliveryId } from '../../domain/ids.ts';
import { fanOutDeliveryId } from '../fan-out.ts';
import { T0, deliveryRecord, endpointRecord, eventRecord, expectUnique, orderRecord, seedEndpointAndEvent, seedEnvironment } from './fixtures.ts';
import { until } from '../../../testing/until.ts';

const MALFORMED_CURSORS = ['', 'not a cursor', '%%%', '...', Buffer.from('abc').toString('base64url'), Buffer.from('-5').toString('base64url')];

export function webhookCases(s: () => Store): void {
  it('events: newest first, cursor pages of 5, 5, 2 without duplicates, and a type filter', async () => {
    const { env } = await seedEnvironment(s());
    const events = Array.from({ length: 12 }, (_, i) =>
      eventRecord(env, { type: i % 3 === 0 ? 'order.paid' : 'order.created', createdAt: T0 + i * 1000, orderId: `order-${i}` }),
    );
    await s().transaction(async (tx) => {
      for (const e of events) await tx.events.insert(e);
    });
    const list = (types: readonly EventType[], limit: number, cursor: string | null) =>
      s().transaction((tx) => tx.events.list(env.id, { types, limit, cursor }));

    const seen: EventRecord[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await list([], 5, cursor);
      sizes.push(page.items.length);
      seen.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(sizes).toEqual([5, 5, 2]);
    expect(seen).toEqual([...events].reverse());

    const paid = await list(['order.paid'], 3, null);
    expect(paid.items.map((e) => e.orderId)).toEqual(['order-9', 'order-6', 'order-3']);
    expect(paid.nextCursor).not.toBeNull();
    const rest = await list(['order.paid'], 3, paid.nextCursor);
    expect(rest).toEqual({ items: [events[0]], nextCursor: null });
    expect((await list(['order.paid', 'order.created'], 20, null)).items).toHaveLength(12);
    expect(await list(['payout.completed'], 5, null)).toEqual({ items: [], nextCursor: null });
    expect(await s().transaction((tx) => tx.events.get(env.id, events[4]!.id))).toEqual(events[4]);
  });

  it('a full last page has no next cursor', async () => {
    const { env } = await seedEnvironment(s());
    await s().transaction(async (tx) => {
      for (let i = 0; i < 5; i++) await tx.events.insert(eventRecord(env, { createdAt: T0 + i }));
    });
    const page = await s().transaction((tx) => tx.events.list(env.id, { types: [], limit: 5, cursor: null }));
    expect(page.items).toHaveLength(5);
    expect(page.nextCursor).toBeNull();
  });

  it('malformed cursors are refused with InvalidCursorError', async () => {
    const { env } = await seedEnvironment(s());
    for (const cursor of MALFORMED_CURSORS) {
      await expect(s().transaction((tx) => tx.events.list(env.id, { types: [], limit: 5, cursor }))).rejects.toBeInstanceOf(InvalidCursorError);
      await expect(s().transaction((tx) => tx.deliveries.list(env.id, { q: null, limit: 5, cursor }))).rejects.toBeInstanceOf(InvalidCursorError);
    }
  });

  it('no two active endpoints of an environment share a URL; a disabled one plus a new active one at its URL is fine', async () => {
    const { env } = await seedEnvironment(s());
    const other = (await seedEnvironment(s())).env;
    const first = endpointRecord(env, { createdAt: T0 });
    await s().transaction((tx) => tx.endpoints.insert(first));
    await expectUnique(s().transaction((tx) => tx.endpoints.insert(endpointRecord(env, { createdAt: T0 + 1 }))), 'active_endpoint');
    await s().transaction((tx) => tx.endpoints.insert(endpointRecord(other)));

    const disabled = { ...first, active: false, version: 2, updatedAt: T0 + 5000, disabledAt: T0 + 5000 };
    const second = endpointRecord(env, { createdAt: T0 + 6000, updatedAt: T0 + 6000 });
    await s().transaction(async (tx) => {
      await tx.endpoints.update(disabled);
      await tx.endpoints.insert(second);
    });
    await s().transaction(async (tx) => {
      expect(await tx.endpoints.get(env.id, first.id)).toEqual(disabled);
      expect(await tx.endpoints.listActive(env.id)).toEqual([second]);
      expect(await tx.endpoints.list(env.id)).toEqual([second, disabled]);
    });
    // Re-activating the old one while the new one has its URL breaks the same rule.
    await expectUnique(s().transaction((tx) => tx.endpoints.update({ ...disabled, active: true, disabledAt: null })), 'active_endpoint');
    const rotated = { ...second, secretEnc: 'v1.endpoint.rotated', version: 2, lastTestDeliveryId: 'dlv_01KAQ5Z7R2T8W6X0Y4Z2A1B3C5', updatedAt: T0 + 7000 };
    await s().transaction((tx) => tx.endpoints.update(rotated));
    expect(await s().transaction((tx) => tx.endpoints.listActive(env.id))).toEqual([rotated]);
  });

  it('several active endpoints of an environment at different URLs, newest first; event types round-trip', async () => {
    const { env } = await seedEnvironment(s());
    const all = endpointRecord(env, { createdAt: T0 });
    const paid = endpointRecord(env, { url: 'https://hooks.northwind.example/paid', eventTypes: ['order.paid'], createdAt: T0 + 1 });
    const two = endpointRecord(env, { url: 'https://hooks.northwind.example/two', eventTypes: ['order.paid', 'order.payment_review_required'], createdAt: T0 + 2 });
    await s().transaction(async (tx) => {
      for (const e of [all, paid, two]) await tx.endpoints.insert(e);
    });
    expect(await s().read((tx) => tx.endpoints.listActive(env.id))).toEqual([two, paid, all]);
    const changed = { ...paid, eventTypes: ['order.created'] as const, version: 2 };
    await s().transaction((tx) => tx.endpoints.update(changed));
    expect(await s().read((tx) => tx.endpoints.get(env.id, paid.id))).toEqual(changed);
  });

  it('insertWithin inserts only below the limit of active endpoints, counting none of another environment or disabled', async () => {
    const { env } = await seedEnvironment(s());
    const other = (await seedEnvironment(s())).env;
    const at = (n: number, o: Partial<EndpointRecord> = {}) => endpointRecord(env, { url: `https://hooks.northwind.example/${n}`, createdAt: T0 + n, ...o });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(at(0, { active: false, disabledAt: T0 }));
      await tx.endpoints.insert(endpointRecord(other));
    });
    expect(await s().transaction((tx) => tx.endpoints.insertWithin(at(1), 2))).toBe(true);
    expect(await s().transaction((tx) => tx.endpoints.insertWithin(at(2), 2))).toBe(true);
    const refused = at(3);
    expect(await s().transaction((tx) => tx.endpoints.insertWithin(refused, 2))).toBe(false);
    expect(await s().read((tx) => tx.endpoints.get(env.id, refused.id))).toBeNull();
    await expectUnique(s().transaction((tx) => tx.endpoints.insertWithin(at(1), 5)), 'active_endpoint');
  });

  it('an endpoint keeps its signature scheme: each value round-trips through insert and update; an unknown one is refused', async () => {
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env, { signatureScheme: 'both' });
    await s().transaction((tx) => tx.endpoints.insert(ep));
    expect((await s().transaction((tx) => tx.endpoints.get(env.id, ep.id)))?.signatureScheme).toBe('both');
    for (const signatureScheme of ['standard-webhooks', 'service-signature'] as const) {
      await s().transaction((tx) => tx.endpoints.update({ ...ep, signatureScheme }));
      expect(await s().transaction((tx) => tx.endpoints.listActive(env.id))).toEqual([{ ...ep, signatureScheme }]);
    }
    const bad = { ...ep, signatureScheme: 'hmac-md5' } as unknown as typeof ep;
    await expect(s().transaction((tx) => tx.endpoints.update(bad))).rejects.toThrow();
  });

  it('deliveries: get, newest-first pages, and search by exact order id, merchant reference or event id', async () => {
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env);
    const e1 = eventRecord(env, { orderId: '9d2f4c6a-1b3e-4f5a-8c7d-0e9f1a2b3c4d', merchantReference: 'INV-2026-0001' });
    const e2 = eventRecord(env, { type: 'order.paid', orderId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', merchantReference: 'INV-2026-0002' });
    const e3 = eventRecord(env, { type: 'webhook.test' });
    const d1 = deliveryRecord(e1, ep, { createdAt: T0 });
    const d2 = deliveryRecord(e2, ep, { createdAt: T0 + 1000 });
    const d3 = deliveryRecord(e2, ep, { createdAt: T0 + 2000, state: 'failed', attemptCount: 10, nextAttemptAt: null });
    const d4 = deliveryRecord(e3, ep, { kind: 'webhook_test', createdAt: T0 + 3000 });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(ep);
      for (const e of [e1, e2, e3]) await tx.events.insert(e);
      for (const d of [d1, d2, d3, d4]) await tx.deliveries.insert(d);
    });
    const list = (q: string | null, limit = 5, cursor: string | null = null) =>
      s().transaction((tx) => tx.deliveries.list(env.id, { q, limit, cursor }));
    expect(await s().transaction((tx) => tx.deliveries.get(env.id, d3.id))).toEqual(d3);
    expect((await list(e1.orderId)).items).toEqual([d1]);
    expect((await list('INV-2026-0002')).items).toEqual([d3, d2]);
    expect((await list(e3.id)).items).toEqual([d4]);
    expect((await list(e2.id)).items).toEqual([d3, d2]);
    expect(await list('INV-2026-0003')).toEqual({ items: [], nextCursor: null });
    expect((await list('INV-2026')).items).toEqual([]);
    const first = await list(null, 3);
    expect(first.items).toEqual([d4, d3, d2]);
    expect(await list(null, 3, first.nextCursor)).toEqual({ items: [d1], nextCursor: null });
    const paged = await list('INV-2026-0002', 1);
    expect(paged.items).toEqual([d3]);
    expect(await list('INV-2026-0002', 1, paged.nextCursor)).toEqual({ items: [d2], nextCursor: null });
    // One endpoint's activity, alone and with a search.
    const other = endpointRecord(env, { url: 'https://hooks.northwind.example/other' });
    const d5 = deliveryRecord(e2, other, { createdAt: T0 + 4000 });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(other);
      await tx.deliveries.insert(d5);
    });
    const ofEndpoint = (endpointId: string, q: string | null = null) => s().read((tx) => tx.deliveries.list(env.id, { q, limit: 5, cursor: null, endpointId }));
    expect((await ofEndpoint(other.id)).items).toEqual([d5]);
    expect((await ofEndpoint(ep.id, e2.id)).items).toEqual([d3, d2]);
    expect((await ofEndpoint(other.id, e2.id)).items).toEqual([d5]);
    expect((await list(e2.id)).items).toEqual([d5, d3, d2]);
    await s().transaction((tx) => tx.deliveries.list(env.id, { q: null, limit: 5, cursor: null, endpointId: null }));
  });

  it('insertWithEvent: the event, and its delivery to the active endpoint only when there is one', async () => {
    const { env } = await seedEnvironment(s());
    const { id: _, endpointId: __, endpointVersion: ___, url: ____, ...template } = deliveryRecord(eventRecord(env), null, { kind: 'order_event' });
    let ready = 0;
    const stop = s().onDeliveriesReady(() => ready++);
    // No endpoint yet: the event alone, and nothing to wake anyone for.
    const alone = eventRecord(env, { orderId: '9d2f4c6a-1b3e-4f5a-8c7d-0e9f1a2b3c4d' });
    const none = { ...template, id: newDeliveryId(), eventId: alone.id };
    expect(await s().transaction((tx) => tx.deliveries.insertWithEvent(alone, none))).toBe(false);
    expect(await s().transaction((tx) => tx.events.get(env.id, alone.id))).toEqual(alone);
    expect(await s().transaction((tx) => tx.deliveries.get(env.id, none.id))).toBeNull();
    // A disabled endpoint and an active one of version 3: the delivery takes the active one's target.
    const old = endpointRecord(env, { active: false, disabledAt: T0 });
    const ep = endpointRecord(env, { url: 'https://hooks.northwind.example/v3', version: 3 });
    const other = (await seedEnvironment(s())).env;
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(old);
      await tx.endpoints.insert(ep);
      await tx.endpoints.insert(endpointRecord(other, { url: 'https://hooks.other.example/' }));
    });
    const event = eventRecord(env, { orderId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', merchantReference: 'INV-2026-0002' });
    const d = { ...template, id: newDeliveryId(), eventId: event.id, orderId: event.orderId, merchantReference: event.merchantReference };
    expect(await s().transaction((tx) => tx.deliveries.insertWithEvent(event, d))).toBe(true);
    expect(await s().transaction((tx) => tx.events.get(env.id, event.id))).toEqual(event);
    expect(await s().transaction((tx) => tx.deliveries.get(env.id, d.id))).toEqual({ ...d, endpointId: ep.id, endpointVersion: 3, url: ep.url });
    await until(() => ready === 1, 'ready === 1');
    // Rolled back with its transaction, event and delivery alike.
    const lost = eventRecord(env);
    const lostDelivery = { ...template, id: newDeliveryId(), eventId: lost.id };
    await expect(
      s().transaction(async (tx) => {
        await tx.deliveries.insertWithEvent(lost, lostDelivery);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await s().transaction((tx) => tx.events.get(env.id, lost.id))).toBeNull();
    expect(await s().transaction((tx) => tx.deliveries.get(env.id, lostDelivery.id))).toBeNull();
    stop();
  });

  it('insertWithEvent fans out: one delivery per active endpoint whose types include the event, ids from the first by endpoint id', async () => {
    const { env } = await seedEnvironment(s());
    const other = (await seedEnvironment(s())).env;
    const { id: _, endpointId: __, endpointVersion: ___, url: ____, ...template } = deliveryRecord(eventRecord(env), null, { kind: 'order_event' });
    const paid = endpointRecord(env, { url: 'https://hooks.northwind.example/paid', eventTypes: ['order.paid'] });
    const review = endpointRecord(env, { url: 'https://hooks.northwind.example/review', eventTypes: ['order.payment_review_required'] });
    const every = endpointRecord(env, { url: 'https://hooks.northwind.example/all', version: 4 });
    const disabled = endpointRecord(env, { url: 'https://hooks.northwind.example/old', active: false, disabledAt: T0 });
    await s().transaction(async (tx) => {
      for (const e of [paid, review, every, disabled, endpointRecord(other)]) await tx.endpoints.insert(e);
    });
    const targetsOf = async (type: EventType) => {
      const event = eventRecord(env, { type, orderId: `order-${type}` });
      const d = { ...template, id: newDeliveryId(), eventId: event.id, orderId: event.orderId };
      const inserted = await s().transaction((tx) => tx.deliveries.insertWithEvent(event, d));
      const { items } = await s().read((tx) => tx.deliveries.list(env.id, { q: event.id, limit: 10, cursor: null }));
      return { inserted, d, items: [...items].sort((a, b) => (a.endpointId! < b.endpointId! ? -1 : 1)) };
    };
    const p = await targetsOf('order.paid');
    expect(p.inserted).toBe(true);
    const [first, second] = [paid, every].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(p.items).toEqual([
      { ...p.d, endpointId: first!.id, endpointVersion: first!.version, url: first!.url },
      { ...p.d, id: fanOutDeliveryId(p.d.id, second!.id, 2), endpointId: second!.id, endpointVersion: second!.version, url: second!.url },
    ]);
    expect(p.items[1]!.id).toMatch(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/);
    const c = await targetsOf('order.created');
    expect(c.items).toEqual([{ ...c.d, endpointId: every.id, endpointVersion: 4, url: every.url }]);
    expect((await s().read((tx) => tx.deliveries.list(other.id, { q: null, limit: 10, cursor: null }))).items).toEqual([]);
  });

  it('disableOlderVersions of one endpoint leaves its sibling endpoints pending deliveries alone', async () => {
    const { env } = await seedEnvironment(s());
    const changed = endpointRecord(env, { url: 'https://hooks.northwind.example/a', version: 2 });
    const sibling = endpointRecord(env, { url: 'https://hooks.northwind.example/b' });
    const event = eventRecord(env);
    const mine = deliveryRecord(event, changed, { endpointVersion: 1 });
    const theirs = deliveryRecord(event, sibling, { endpointVersion: 1 });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(changed);
      await tx.endpoints.insert(sibling);
      await tx.events.insert(event);
      for (const d of [mine, theirs]) await tx.deliveries.insert(d);
    });
    expect(await s().transaction((tx) => tx.deliveries.disableOlderVersions(changed.id, 2, T0 + 1))).toBe(1);
    expect((await s().read((tx) => tx.deliveries.get(env.id, mine.id)))?.state).toBe('disabled');
    expect(await s().read((tx) => tx.deliveries.get(env.id, theirs.id))).toEqual(theirs);
  });

  it('insertWithEvent with a new order writes the order first, in the same unit: all of it or nothing', async () => {
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env);
    await s().transaction((tx) => tx.endpoints.insert(ep));
    const { id: _, endpointId: __, endpointVersion: ___, url: ____, ...template } = deliveryRecord(eventRecord(env), null, { kind: 'order_event' });
    const order = orderRecord(env, 'ORD-000001');
    const event = eventRecord(env, { orderId: order.id, merchantReference: order.merchantReference });
    const d = { ...template, id: newDeliveryId(), eventId: event.id, orderId: order.id, merchantReference: order.merchantReference };
    expect(await s().transaction((tx) => tx.deliveries.insertWithEvent(event, d, order))).toBe(true);
    await s().transaction(async (tx) => {
      expect(await tx.orders.get(env.id, order.id)).toEqual(order);
      expect(await tx.events.get(env.id, event.id)).toEqual(event);
      expect(await tx.deliveries.get(env.id, d.id)).toEqual({ ...d, endpointId: ep.id, endpointVersion: ep.version, url: ep.url });
    });
    // The same order number again breaks its uniqueness rule: nothing of the second is written.
    const twin = orderRecord(env, 'ORD-000001');
    const twinEvent = eventRecord(env, { orderId: twin.id });
    const twinDelivery = { ...template, id: newDeliveryId(), eventId: twinEvent.id };
    await expectUnique(s().transaction((tx) => tx.deliveries.insertWithEvent(twinEvent, twinDelivery, twin)), 'order_number');
    await s().transaction(async (tx) => {
      expect(await tx.orders.get(env.id, twin.id)).toBeNull();
      expect(await tx.events.get(env.id, twinEvent.id)).toBeNull();
      expect(await tx.deliveries.get(env.id, twinDelivery.id)).toBeNull();
    });
  });

  it('disableOlderVersions only disables pending deliveries of older versions of that endpoint', async () => {
    const { env } = await seedEnvironment(s());
    const otherEnv = (await seedEnvironment(s())).env;
    const ep = endpointRecord(env, { version: 2 });
    const otherEp = endpointRecord(otherEnv);
    const event = eventRecord(env);
    const otherEvent = eventRecord(otherEnv);
    const v1a = deliveryRecord(event, ep, { endpointVersion: 1 });
    const v1b = deliveryRecord(event, ep, { endpointVersion: 1, nextAttemptAt: T0 + 30_000, attemptCount: 2 });
    const v1done = deliveryRecord(event, ep, { endpointVersion: 1, state: 'delivered', nextAttemptAt: null, deliveredAt: T0 + 10 });
    const v1failed = deliveryRecord(event, ep, { endpointVersion: 1, state: 'failed', nextAttemptAt: null });
    const v2 = deliveryRecord(event, ep, { endpointVersion: 2 });
    const elsewhere = deliveryRecord(otherEvent, otherEp, { endpointVersion: 1 });
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(ep);
      await tx.endpoints.insert(otherEp);
      await tx.events.insert(event);
      await tx.events.insert(otherEvent);
      for (const d of [v1a, v1b, v1done, v1failed, v2, elsewhere]) await tx.deliveries.insert(d);
    });
    const T1 = T0 + 60_000;
    expect(await s().transaction((tx) => tx.deliveries.disableOlderVersions(ep.id, 2, T1))).toBe(2);
    await s().transaction(async (tx) => {
      for (const d of [v1a, v1b]) {
        const got = await tx.deliveries.get(env.id, d.id);
        expect(got).toMatchObject({ state: 'disabled', updatedAt: T1, attemptCount: d.attemptCount, cycle: d.cycle });
      }
      expect(await tx.deliveries.get(env.id, v1done.id)).toEqual(v1done);
      expect(await tx.deliveries.get(env.id, v1failed.id)).toEqual(v1failed);
      expect(await tx.deliveries.get(env.id, v2.id)).toEqual(v2);
      expect(await tx.deliveries.get(otherEnv.id, elsewhere.id)).toEqual(elsewhere);
    });
    expect(await s().transaction((tx) => tx.deliveries.disableOlderVersions(ep.id, 2, T1))).toBe(0);
  });

  it('restart starts a new cycle of a failed delivery only', async () => {
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env, { version: 3, url: 'https://hooks.northwind.example/v3' });
    const event = eventRecord(env, { orderId: '5c4b3a29-1807-4f6e-8d5c-4b3a29180706' });
    const failed = deliveryRecord(event, ep, {
      endpointVersion: 1,
      url: 'https://old.northwind.example/hooks',
      state: 'failed',
      attemptCount: 10,
      nextAttemptAt: null,
      updatedAt: T0 + 1000,
    });
    const delivered = deliveryRecord(event, ep, { state: 'delivered', attemptCount: 1, nextAttemptAt: null, deliveredAt: T0 + 5 });
    const pending = deliveryRecord(event, ep);
    await s().transaction(async (tx) => {
      await tx.endpoints.insert(ep);
      await tx.events.insert(event);
      for (const d of [failed, delivered, pending]) await tx.deliveries.insert(d);
    });
    const T1 = T0 + 3_600_000;
    const restart = (id: string, environmentId = env.id) =>
      s().transaction((tx) => tx.deliveries.restart({ id, environmentId, endpointId: ep.id, endpointVersion: 3, url: ep.url, now: T1 }));
    expect(await restart(delivered.id)).toBe(false);
    expect(await restart(pending.id)).toBe(false);
    expect(await restart('dlv_unknown')).toBe(false);
    expect(await restart(failed.id)).toBe(true);
    expect(await restart(failed.id)).toBe(false);
    await s().transaction(async (tx) => {
      expect(await tx.deliveries.get(env.id, failed.id)).toEqual({
        ...failed,
        state: 'pending',
        attemptCount: 0,
        cycle: 2,
        nextAttemptAt: T1,
        endpointVersion: 3,
        url: ep.url,
        updatedAt: T1,
      });
      expect(await tx.deliveries.get(env.id, delivered.id)).toEqual(delivered);
      expect(await tx.deliveries.get(env.id, pending.id)).toEqual(pending);
    });
  });

  it('onDeliveriesReady fires after a commit that added or restarted deliveries, never for a rollback', async () => {
    const { env } = await seedEnvironment(s());
    const { ep, event } = await seedEndpointAndEvent(s(), env);
    let calls = 0;
    const stop = s().onDeliveriesReady(() => calls++);
    // A second listener that stays: once it has heard a commit, any call the listener under test
    // was to get for what came before has arrived too (listeners are called in commit order).
    let marks = 0;
    const stopMarker = s().onDeliveriesReady(() => marks++);

    await expect(
      s().transaction(async (tx) => {
        await tx.deliveries.insert(deliveryRecord(event, ep));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');

    const failed = deliveryRecord(event, ep, { state: 'failed', nextAttemptAt: null });
    let insideTx = -1;
    await s().transaction(async (tx) => {
      await tx.deliveries.insert(deliveryRecord(event, ep));
      await tx.deliveries.insert(failed);
      insideTx = calls;
    });
    expect(insideTx).toBe(0);
    await until(() => marks === 1, 'the commit heard by the marker');
    expect(calls).toBe(1); // the commit's, none for the rollback

    await s().transaction((tx) => tx.deliveries.restart({ id: failed.id, environmentId: env.id, endpointId: ep.id, endpointVersion: 1, url: ep.url, now: T0 }));
    await until(() => marks === 2, 'the restart heard by the marker');
    expect(calls).toBe(2);

    stop();
    await s().transaction((tx) => tx.deliveries.insert(deliveryRecord(event, ep)));
    await until(() => marks === 3, 'the insert heard by the marker');
    expect(calls).toBe(2); // a stopped listener hears nothing more
    stopMarker();
  });

}
