// The event stream's reads (EventRepo.streamHead / streamAfter) and its wake-up
// (Store.onEventsRecorded): commit order, resumption without loss, filters, isolation.
import { expect, it } from 'vitest';
import { InvalidCursorError } from '../errors.ts';
import type { Store, StreamedEvent } from '../types.ts';
import { T0, eventRecord, seedEnvironment, waitFor } from './fixtures.ts';

const read = (s: Store, envId: string, cursor: string, types: readonly ('order.paid' | 'order.created' | 'webhook.test')[] = [], limit = 100) =>
  s.read((tx) => tx.events.streamAfter(envId, { cursor, types, limit }));
const ids = (items: StreamedEvent[]): string[] => items.map((i) => i.event.id);

export function streamCases(s: () => Store): void {
  it('streams events committed after the head in commit order, resumes after any cursor, filters by type', async () => {
    const { env } = await seedEnvironment(s());
    const other = await seedEnvironment(s(), { name: 'live' });
    const before = eventRecord(env, { createdAt: T0 });
    await s().transaction((tx) => tx.events.insert(before));
    const head = await s().read((tx) => tx.events.streamHead(env.id));
    expect(head).toMatch(/^[A-Za-z0-9_-]+$/);

    const events = [0, 1, 2, 3].map((i) => eventRecord(env, { type: i === 2 ? 'order.paid' : 'order.created', createdAt: T0 + 10 + i }));
    await s().transaction(async (tx) => {
      await tx.events.insert(events[0]!);
      await tx.events.insert(events[1]!);
    });
    await s().transaction((tx) => tx.events.insert(eventRecord(other.env, { createdAt: T0 + 20 })));
    await s().transaction((tx) => tx.events.insert(events[2]!));
    await s().transaction((tx) => tx.events.insert(events[3]!));

    const all = await read(s(), env.id, head);
    expect(all.map((i) => i.event)).toEqual(events);
    expect(new Set(all.map((i) => i.cursor)).size).toBe(4);
    // Each cursor resumes exactly after its event, also in batches.
    expect(ids(await read(s(), env.id, all[1]!.cursor))).toEqual(ids(all.slice(2)));
    expect(ids(await read(s(), env.id, head, [], 2))).toEqual(ids(all.slice(0, 2)));
    expect(await read(s(), env.id, all[3]!.cursor)).toEqual([]);
    expect(ids(await read(s(), env.id, head, ['order.paid']))).toEqual([events[2]!.id]);
    // A head taken now is after all of them.
    expect(await read(s(), env.id, await s().read((tx) => tx.events.streamHead(env.id)))).toEqual([]);
    for (const cursor of ['', 'not a cursor', Buffer.from('1.x').toString('base64url'), Buffer.from('01.2').toString('base64url')]) {
      await expect(read(s(), env.id, cursor)).rejects.toBeInstanceOf(InvalidCursorError);
    }
  });

  it('onEventsRecorded hears a commit that recorded events, with the environment, never a rollback', async () => {
    const { env } = await seedEnvironment(s());
    const heard: string[] = [];
    const stop = s().onEventsRecorded((environmentId) => heard.push(environmentId));
    try {
      await s()
        .transaction(async (tx) => {
          await tx.events.insert(eventRecord(env));
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      expect(heard).toEqual([]);
      await s().transaction((tx) => tx.events.insert(eventRecord(env)));
      await waitFor(() => heard.length > 0);
      expect(heard).toEqual([env.id]);
    } finally {
      stop();
    }
  });
}
