import { describe, expect, it } from 'vitest';
import { createPace } from './pace.ts';

describe('pace per destination', () => {
  it('holds a paused destination back until the pause ends, and keeps the later of two pauses', () => {
    const pace = createPace();
    expect(pace.openAt('e:a', 1_000)).toBe(1_000);
    pace.pause('e:a', 4_000);
    pace.pause('e:a', 3_000);
    expect(pace.openAt('e:a', 1_000)).toBe(4_000);
    expect(pace.openAt('e:b', 1_000)).toBe(1_000);
    expect(pace.openAt('e:a', 5_000)).toBe(5_000);
  });

  it('spaces the sends of a capped destination 1000 / maxPerSecond ms apart; an uncapped one is never held', () => {
    const pace = createPace();
    let now = 10_000;
    const sent: number[] = [];
    while (sent.length < 21) {
      now = pace.openAt('e:a', now);
      sent.push(now);
      pace.took('e:a', now, 20);
    }
    expect(sent[20]! - sent[0]!).toBe(1_000);
    pace.took('e:b', now, undefined);
    expect(pace.openAt('e:b', now)).toBe(now);
  });

  it('holds a destination whose cap was removed only until the slot of its last capped send', () => {
    const pace = createPace();
    pace.took('e:a', 0, 10); // next at 100
    pace.took('e:a', 100, undefined); // the cap removed: this send sets no slot
    expect(pace.openAt('e:a', 100)).toBe(100);
    pace.took('e:a', 100, undefined);
    expect(pace.openAt('e:a', 100)).toBe(100);
  });

  it('catches up one interval on a late wake-up, no more', () => {
    const pace = createPace();
    pace.took('e:a', 0, 10); // next at 100
    pace.took('e:a', 130, 10); // 30 ms late: next at 200, not 230
    expect(pace.openAt('e:a', 130)).toBe(200);
    pace.took('e:a', 5_000, 10); // idle long: one interval of credit only
    expect(pace.openAt('e:a', 5_000)).toBe(5_000);
    pace.took('e:a', 5_000, 10);
    expect(pace.openAt('e:a', 5_000)).toBe(5_100);
  });
});
