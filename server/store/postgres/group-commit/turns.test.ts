// The turn rule of lone bulk statements alone: no database, no timers.
import { describe, expect, it } from 'vitest';
import { LONE_IN_FLIGHT, LoneTurns, type TurnHolder } from './turns.ts';

const holder = (): TurnHolder => ({ turn: null });

describe('lone bulk statements take turns', () => {
  it('any batch that sends no lone statement may begin at once, however many are in flight', () => {
    const turns = new LoneTurns();
    for (let i = 0; i < LONE_IN_FLIGHT; i++) turns.take(5);
    expect(turns.open(false, 0, false)).toBe(true);
  });

  it('the first lone statement begins at once; the second once as many units are queued as the first holds, or once one ended', () => {
    const turns = new LoneTurns();
    expect(turns.open(true, 1, false)).toBe(true);
    turns.take(3);
    expect(turns.open(true, 2, false)).toBe(false);
    expect(turns.open(true, 3, false)).toBe(true);
    expect(turns.open(true, 1, true)).toBe(true);
  });

  it(`never more than ${LONE_IN_FLIGHT} in flight, whatever is queued or ended`, () => {
    const turns = new LoneTurns();
    turns.take(1);
    turns.take(1);
    expect(turns.open(true, 100, true)).toBe(false);
  });

  it('a batch that took a bulk kind\'s units only keeps its turn, counting the units it took', () => {
    const turns = new LoneTurns();
    const batch = holder();
    batch.turn = turns.take(2);
    expect(turns.claim(batch, 5)).toBe(true);
    expect(batch.turn?.units).toBe(5);
    // The next one now waits for 5 queued units, not 2.
    expect(turns.open(true, 4, false)).toBe(false);
    expect(turns.open(true, 5, false)).toBe(true);
  });

  it('a batch without a turn that took a bulk kind\'s units only takes one if there is room, else sends them inside BEGIN and COMMIT', () => {
    const turns = new LoneTurns();
    const [a, b, c] = [holder(), holder(), holder()];
    expect(turns.claim(a, 2)).toBe(true);
    expect(turns.claim(b, 2)).toBe(true);
    expect(turns.claim(c, 2)).toBe(false);
    expect(c.turn).toBeNull();
    expect(turns.count).toBe(2);
  });

  it('a batch whose units are not one bulk kind\'s only gives back its turn, and the waiting loops hear that none ended', async () => {
    const turns = new LoneTurns();
    const batch = holder();
    batch.turn = turns.take(2);
    const woken = turns.wait();
    expect(turns.waiting).toBe(1);
    expect(turns.claim(batch, 0)).toBe(false);
    expect(batch.turn).toBeNull();
    expect(turns.count).toBe(0);
    expect(turns.waiting).toBe(0);
    await expect(woken).resolves.toBe(false);
  });

  it('a turn that ends wakes every waiting loop, telling them one ended; ending twice is nothing', async () => {
    const turns = new LoneTurns();
    const batch = holder();
    batch.turn = turns.take(2);
    const woken = [turns.wait(), turns.wait()];
    turns.end(batch, true);
    expect(await Promise.all(woken)).toEqual([true, true]);
    turns.end(batch, true);
    expect(turns.count).toBe(0);
  });
});
