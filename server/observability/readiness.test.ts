import { describe, expect, it } from 'vitest';
import { ManualClock } from '../domain/clock.ts';
import type { Store } from '../domain/store.ts';
import { createReadiness } from './readiness.ts';

const answeringStore = { transaction: async () => undefined } as unknown as Store;

describe('readiness', () => {
  it('is not ready while the delivery worker is stalled, with its reason, and ready again once it works', async () => {
    const clock = new ManualClock();
    const readiness = createReadiness({ clock, cacheMs: 0 });
    let stalled: string | null = "the delivery queue's claim failed 3 s ago and has not succeeded since (ETIMEDOUT)";
    readiness.delivery(() => stalled);
    readiness.serving(answeringStore);
    expect(await readiness.check()).toEqual({ ready: false, reason: 'delivery-stalled', detail: stalled });
    stalled = null;
    expect(await readiness.check()).toEqual({ ready: true });
  });

  it("reads the delivery's state on every check, also while the store's probe is cached", async () => {
    const clock = new ManualClock();
    const readiness = createReadiness({ clock, cacheMs: 1_000 });
    let stalled: string | null = null;
    readiness.delivery(() => stalled);
    readiness.serving(answeringStore);
    expect(await readiness.check()).toEqual({ ready: true });
    stalled = 'the sending thread failed 5 times in a row';
    expect(await readiness.check()).toEqual({ ready: false, reason: 'delivery-stalled', detail: stalled });
    stalled = null;
    expect(await readiness.check()).toEqual({ ready: true });
  });

  it('is not ready while the heartbeat says the instance must not serve, before a stalled worker, and ready again after', async () => {
    const readiness = createReadiness({ clock: new ManualClock(), cacheMs: 0 });
    let lapsed: string | null = 'no heartbeat confirmed for 20 s: other instances may count this one dead, and a contract migration may have run';
    readiness.heartbeat(() => lapsed);
    readiness.delivery(() => 'stalled');
    readiness.serving(answeringStore);
    expect(await readiness.check()).toEqual({ ready: false, reason: 'heartbeat-lapsed', detail: lapsed });
    lapsed = null;
    readiness.delivery(() => null);
    expect(await readiness.check()).toEqual({ ready: true });
  });

  it('reports an unreachable store before a stalled worker, and draining before both', async () => {
    const clock = new ManualClock();
    const readiness = createReadiness({ clock, cacheMs: 0 });
    readiness.delivery(() => 'stalled');
    readiness.serving({ transaction: async () => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' })) } as unknown as Store);
    expect(await readiness.check()).toMatchObject({ ready: false, reason: 'store-unreachable' });
    readiness.draining();
    expect(await readiness.check()).toMatchObject({ ready: false, reason: 'draining' });
  });
});
