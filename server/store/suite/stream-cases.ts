// The event stream's reads (EventRepo.streamHead / streamAfter) and its wake-up
// (Store.onEventsRecorded): commit order, resumption without loss, filters, isolation.
import { expect, it } from 'vitest';
import { InvalidCursorError } from '../../domain/store-errors.ts';
import type { Store, StreamedEvent } from '../../domain/store.ts';
import { T0, eventRecord, seedEnvironment } from './fixtures.ts';
import { until } from '../../../testing/until.ts';

const read = (s: Store, envId: string, cursor: string, types: readonly ('order.paid' | 'order.created' | 'webhook.test')[] = [], limit = 100) =>
  s.read((tx) => tx.events.streamAfter(envId, { cursor, types, limit }));
const ids = (items: StreamedEvent[]): string[] => items.map((i) => i.event.id);

/** Reads until `n` events are readable: on PostgreSQL a commit is readable once every older
 * transaction of the cluster has ended, which another database's tests can delay. */
export async function readUntil(s: Store, envId: string, cursor: string, n: number): Promise<StreamedEvent[]> {
  return until(async () => {
    const items = await read(s, envId, cursor);
    return items.length >= n && items;
  }, `${n} events after the cursor`);
}

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

    const all = await readUntil(s(), env.id, head, 4);
    expect(all.map((i) => i.event)).toEqual(events);
    expect(new Set(all.map((i) => i.cursor)).size).toBe(4);
    // Each cursor resumes exactly after its event, also in batches.
    expect(ids(await read(s(), env.id, all[1]!.cursor))).toEqual(ids(all.slice(2)));
    expect(ids(await read(s(), env.id, head, [], 2))).toEqual(ids(all.slice(0, 2)));
    expect(await read(s(), env.id, all[3]!.cursor)).toEqual([]);
    expect(ids(await read(s(), env.id, head, ['order.paid']))).toEqual([events[2]!.id]);
    // A head taken now is after all of them.
    expect(await read(s(), env.id, await s().read((tx) => tx.events.streamHead(env.id)))).toEqual([]);
    // The last three: an opening whose xmax is not above the position, a running id at xmax, ids not ascending.
    const forged = ['1.x', '01.2', '5.0~5~', '5.0~9~0', '5.0~9~2,3'].map((t) => Buffer.from(t).toString('base64url'));
    for (const cursor of ['', 'not a cursor', ...forged]) {
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
      await until(() => heard.length > 0, 'heard.length > 0');
      expect(heard).toEqual([env.id]);
    } finally {
      stop();
    }
  });
}
