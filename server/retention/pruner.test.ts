// The pruner over a real store: a pass goes batch by batch, pausing between batches and
// waiting the interval after the pass; its figures reach the metrics; stop ends a wait.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../domain/clock.ts';
import { FakeTimers } from '../delivery/testing.ts';
import { createMetrics } from '../observability/metrics.ts';
import { openSqliteStore, type SqliteStore } from '../store/sqlite/store.ts';
import { T0, deliveryRecord, eventRecord, seedEnvironment } from '../store/suite/fixtures.ts';
import { createPruner, type Pruner, type PrunerOptions } from './pruner.ts';
import type { LoadProbe } from './pacing.ts';
import type { PruneRequest } from '../domain/store.ts';
import { parseDuration, retentionSettings } from './settings.ts';
import { until } from '../../testing/until.ts';

const DAY = 86_400_000;
const IDLE: LoadProbe = { mark: () => null, since: () => 0 };
const BUSY: LoadProbe = { mark: () => null, since: () => 0.9 };

/** A pruner on `store` with the tests' policy, pause and pacing; `o` sets the rest. */
const prunerOn = (store: SqliteStore, clock: ManualClock, timers: FakeTimers, o: Partial<PrunerOptions>): Pruner =>
  createPruner({
    store,
    clock,
    timers,
    log: pino({ level: 'silent' }),
    policy: { liveMs: 30 * DAY, testMs: 7 * DAY, idempotencyKeyMs: 3 * DAY },
    intervalMs: 60_000,
    batch: 2,
    pauseMs: 25,
    busyShare: 0.05,
    load: IDLE,
    ...o,
  });
let store: SqliteStore | null = null;

afterEach(async () => {
  await store?.close();
  store = null;
});

describe('pruner', () => {
  it('prunes in paused batches, then waits the interval; counts rows and the oldest kept', async () => {
    store = await openSqliteStore({ file: ':memory:' });
    await store.migrate();
    const s = store;
    const { env } = await seedEnvironment(s, { name: 'live' });
    const kept = eventRecord(env, { createdAt: T0 + 35 * DAY });
    await s.transaction(async (tx) => {
      for (let i = 0; i < 5; i++) {
        const e = eventRecord(env, { createdAt: T0 });
        await tx.events.insert(e);
        await tx.deliveries.insert(deliveryRecord(e, null, { state: 'delivered', nextAttemptAt: null, deliveredAt: T0, createdAt: T0 }));
      }
      await tx.events.insert(kept);
    });
    const clock = new ManualClock(T0 + 40 * DAY);
    const timers = new FakeTimers();
    const metrics = createMetrics({ clock, defaultMetrics: false });
    const requests: PruneRequest[] = [];
    const prune = s.prune.bind(s);
    s.prune = (req) => (requests.push(req), prune(req));
    const pruner = prunerOn(s, clock, timers, { statementMs: 10_000, metrics: metrics.retention });
    pruner.start();
    // Batches of 2: a pause after the first and the second, the interval after the third.
    for (const expected of [25, 25, 60_000]) {
      await until(() => timers.delays().length === 1, 'timers.delays().length === 1');
      expect(timers.delays()).toEqual([expected]);
      if (expected !== 60_000) timers.fireAll();
    }
    expect(await s.read((tx) => tx.events.get(env.id, kept.id))).not.toBeNull();
    expect(requests.map((r) => r.statementMs)).toEqual([10_000, 10_000, 10_000]);
    const text = await metrics.render();
    expect(text).toContain('retention_pruned_rows_total{table="deliveries"} 5');
    expect(text).toContain('retention_pruned_rows_total{table="events"} 5');
    expect(text).toContain(`retention_oldest_row_age_seconds{table="events"} ${5 * 86_400}`);
    expect(text).toContain('retention_prune_batch_duration_seconds_count{outcome="ran"} 3');
    // stop ends the interval's wait.
    await pruner.stop();
    expect(timers.delays()).toEqual([]);
  });

  it('a pass() during the interval leaves the loop its own wait: stop() still ends it', async () => {
    store = await openSqliteStore({ file: ':memory:' });
    await store.migrate();
    const s = store;
    const { env } = await seedEnvironment(s, { name: 'live' });
    const timers = new FakeTimers();
    const pruner = prunerOn(s, new ManualClock(T0 + 40 * DAY), timers, {});
    pruner.start();
    // Nothing expired: the loop's pass ends at once and it waits the interval.
    await until(() => timers.delays().length === 1, 'the interval');
    await s.transaction(async (tx) => {
      for (let i = 0; i < 3; i++) await tx.events.insert(eventRecord(env, { createdAt: T0 }));
    });
    // A pass of its own while the loop waits: one pause between its two batches, the interval still set.
    const pass = pruner.pass();
    await until(() => timers.delays().length === 2, 'the pass to pause');
    expect(timers.delays().sort((a, b) => a - b)).toEqual([25, 60_000]);
    for (const [id, t] of [...timers.pending]) {
      if (t.ms !== 25) continue;
      timers.pending.delete(id);
      t.fn();
    }
    expect((await pass).deleted.events).toBe(3);
    expect(timers.delays()).toEqual([60_000]);
    let stopped = false;
    void pruner.stop().then(() => (stopped = true));
    await until(() => stopped, 'stop() to end the interval', 2_000);
    expect(timers.delays()).toEqual([]);
  });

  it('reads durations as the settings are written', () => {
    expect(parseDuration('X', '30d')).toBe(30 * DAY);
    expect(parseDuration('X', '72h')).toBe(72 * 3_600_000);
    expect(parseDuration('X', '2m')).toBe(120_000);
    expect(parseDuration('X', '500ms')).toBe(500);
    expect(() => parseDuration('RETENTION_LIVE', '30')).toThrow(/RETENTION_LIVE must be a positive duration/);
    expect(() => parseDuration('RETENTION_LIVE', '0d')).toThrow(/RETENTION_LIVE/);
    expect(retentionSettings({}).statementMs).toBe(10_000);
    expect(retentionSettings({ PRUNE_STATEMENT_TIMEOUT: '30s' }).statementMs).toBe(30_000);
    expect(() => retentionSettings({ PRUNE_STATEMENT_TIMEOUT: '10' })).toThrow(/PRUNE_STATEMENT_TIMEOUT/);
    expect(retentionSettings({}).busyShare).toBe(0.05);
    expect(retentionSettings({ PRUNE_BUSY_SHARE: '0.2' }).busyShare).toBe(0.2);
    for (const bad of ['0', '1.5', 'half']) expect(() => retentionSettings({ PRUNE_BUSY_SHARE: bad })).toThrow(/PRUNE_BUSY_SHARE/);
  });

  it('while the instance is busy, rests after each batch so that it takes at most its share of the time', async () => {
    store = await openSqliteStore({ file: ':memory:' });
    await store.migrate();
    const s = store;
    const { env } = await seedEnvironment(s, { name: 'live' });
    await s.transaction(async (tx) => {
      for (let i = 0; i < 4; i++) await tx.events.insert(eventRecord(env, { createdAt: T0 }));
    });
    const clock = new ManualClock(T0 + 40 * DAY);
    const timers = new FakeTimers();
    const prune = s.prune.bind(s);
    // Each batch takes 40 ms of the clock.
    s.prune = async (req) => {
      const r = await prune(req);
      clock.advance(40);
      return r;
    };
    let load = BUSY;
    const pruner = prunerOn(s, clock, timers, { batch: 1, load: { mark: () => null, since: (m) => load.since(m) } });
    pruner.start();
    // Busy: the pause, then the rest of 40 ms × 19 = 760 ms in all.
    for (const expected of [25, 735]) {
      await until(() => timers.delays().length === 1, 'timers.delays().length === 1');
      expect(timers.delays()).toEqual([expected]);
      timers.fireAll();
    }
    // Idle again: the pause alone.
    load = IDLE;
    await until(() => timers.delays().length === 1, 'timers.delays().length === 1');
    expect(timers.delays()).toEqual([25]);
    timers.fireAll();
    await until(() => timers.delays().length === 1, 'timers.delays().length === 1');
    expect(timers.delays()).toEqual([25]);
    await pruner.stop();
  });
});
