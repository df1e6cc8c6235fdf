// The challenge book and the failure counters under a manual clock: one binding's challenges
// are never evicted by another's, and counters forget keys whose window has passed.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../domain/clock.ts';
import { CHALLENGE_TTL_MS, ChallengeBook, ChallengeBookFull } from './challenges.ts';
import { FAILURE_WINDOW_MS, WindowLimiter } from './window-limiter.ts';

describe('ChallengeBook', () => {
  it('never evicts another binding’s challenge: a full book refuses the new one instead', () => {
    const clock = new ManualClock(0);
    const book = new ChallengeBook(clock, CHALLENGE_TTL_MS, 3);
    book.issue('sign-in', 'victim', 'c-victim');
    book.issue('sign-in', 'attacker-1', 'c1');
    book.issue('sign-in', 'attacker-2', 'c2');
    for (let i = 3; i < 100; i++) expect(() => book.issue('sign-in', `attacker-${i}`, `c${i}`)).toThrow(ChallengeBookFull);
    // A binding already in the book may replace its own challenge.
    book.issue('sign-in', 'attacker-1', 'c1-again');
    expect(book.size).toBe(3);
    expect(book.take('sign-in', 'victim')).toBe('c-victim');
  });

  it('makes room from expired challenges only, and holds one challenge per purpose and binding', () => {
    const clock = new ManualClock(0);
    const book = new ChallengeBook(clock, CHALLENGE_TTL_MS, 2);
    book.issue('register', 'a', 'r1');
    book.issue('register', 'a', 'r2');
    book.issue('reverify', 'a', 'v1');
    expect(book.size).toBe(2);
    clock.advance(CHALLENGE_TTL_MS);
    book.issue('sign-in', 'b', 's1');
    expect(book.size).toBe(1);
    expect(book.take('register', 'a')).toBeNull();
    expect(book.take('sign-in', 'b')).toBe('s1');
  });
});

describe('WindowLimiter', () => {
  it('forgets keys whose window has passed, even when they never come back', () => {
    const clock = new ManualClock(0);
    const limiter = new WindowLimiter(clock);
    for (let i = 0; i < 1000; i++) limiter.record([{ kind: 'address', id: `198.51.100.${i}` }]);
    expect(limiter.size).toBe(1000);
    clock.advance(FAILURE_WINDOW_MS);
    limiter.record([{ kind: 'member', id: 'mem_1' }]);
    expect(limiter.size).toBe(1);
  });

  it('keeps a key with a failure inside its window', () => {
    const clock = new ManualClock(0);
    const limiter = new WindowLimiter(clock);
    limiter.record([{ kind: 'member', id: 'mem_old' }]);
    clock.advance(FAILURE_WINDOW_MS - 1);
    limiter.record([{ kind: 'member', id: 'mem_recent' }]);
    clock.advance(FAILURE_WINDOW_MS / 2);
    limiter.record([{ kind: 'member', id: 'mem_now' }]);
    expect(limiter.size).toBe(2);
  });
});
