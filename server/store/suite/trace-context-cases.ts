// EventRecord.traceContext (tracing, issue 61): kept with the event by every path that writes
// one (events.insert, deliveries.insertWithEvent, createOrder alone and batched), and read back
// with it, by get and by the delivery queue's claim, so an attempt links to the request that
// recorded its event. An event written without one reads back without it.
import { expect, it } from 'vitest';
import type { Store } from '../../domain/store.ts';
import { newDeliveryId, newEventId } from '../../domain/ids.ts';
import { deliveryRecord, endpointRecord, eventRecord, seedEnvironment } from './fixtures.ts';
import { orderCreation } from './order-creation-cases.ts';

const traceparent = (n: number): string => `00-${'4bf92f3577b34da6a3ce929d0e0e47'}${String(n).padStart(2, '0')}-00f067aa0ba902b7-01`;

export function traceContextCases(s: () => Store): void {
  it('keeps an event’s trace context on every insert path, and the claim reads it back; an event without one has none', async () => {
    const { env } = await seedEnvironment(s());
    const ep = endpointRecord(env);
    await s().transaction((tx) => tx.endpoints.insert(ep));
    const plain = eventRecord(env, { id: newEventId() });
    const inserted = eventRecord(env, { id: newEventId(), traceContext: traceparent(1) });
    const withDelivery = eventRecord(env, { id: newEventId(), traceContext: traceparent(2) });
    const { endpointId: _, endpointVersion: __, url: ___, ...untargeted } = deliveryRecord(withDelivery, null, { id: newDeliveryId() });
    await s().transaction(async (tx) => {
      await tx.events.insert(plain);
      await tx.events.insert(inserted);
      await tx.deliveries.insertWithEvent(withDelivery, untargeted);
    });
    // Concurrent creations: PostgreSQL writes them in one statement, with and without a trace context.
    const orders = [orderCreation(env), orderCreation(env), orderCreation(env)].map((c, i) => (i === 1 ? c : { ...c, event: { ...c.event, traceContext: traceparent(10 + i) } }));
    await Promise.all(orders.map((c) => s().createOrder(c)));
    const written = [plain, inserted, withDelivery, ...orders.map((c) => c.event)];
    const read = await s().read((tx) => Promise.all(written.map((e) => tx.events.get(env.id, e.id))));
    expect(read).toEqual(written);
    expect(read[0]).not.toHaveProperty('traceContext');
    expect(read[4]).not.toHaveProperty('traceContext');

    const claimed = await s().queue.claim({ owner: 'w', now: Date.now() + 60_000, leaseMs: 30_000, limit: 10, perEndpointLimit: 10 });
    const byEvent = new Map(claimed.map((c) => [c.event.id, c.event.traceContext]));
    expect(byEvent).toEqual(
      new Map([
        [withDelivery.id, traceparent(2)],
        [orders[0]!.event.id, traceparent(10)],
        [orders[1]!.event.id, undefined],
        [orders[2]!.event.id, traceparent(12)],
      ]),
    );
  });
}
