import { describe, expect, it } from 'vitest';
import { endpointLimits, verdict, type Answer, type EndpointLimits } from './endpoint-limit.ts';

// The adaptive per-destination limit alone: pure, launch numbers instead of time.

const ok: Answer = { success: true, statusCode: 200, durationMs: 10 };
const status = (statusCode: number, durationMs = 10): Answer => ({ success: statusCode >= 200 && statusCode < 300, statusCode, durationMs });
const timeout: Answer = { success: false, statusCode: null, durationMs: 10_000 };

/** Launch numbers, as the dispatcher hands them out. */
let seq = 0;

/** `n` healthy answers while `dest` uses its whole limit. */
function healthy(limits: EndpointLimits, dest: string, n: number): void {
  for (let i = 0; i < n; i++) limits.record(dest, ok, { seq: ++seq, lastSeq: seq, inFlight: limits.limit(dest) });
}

/** One overload answer to an attempt launched now. */
function overload(limits: EndpointLimits, dest: string, answer: Answer = timeout): void {
  limits.record(dest, answer, { seq: ++seq, lastSeq: seq, inFlight: 1 });
}

describe('verdict', () => {
  it('healthy: a 2xx within healthyMs; overload: no answer, 5xx, 429, or slower than healthyMs; neutral: any other fast answer', () => {
    expect(verdict(status(200, 500), 500)).toBe('healthy');
    expect(verdict(status(204, 0), 500)).toBe('healthy');
    expect(verdict(status(200, 501), 500)).toBe('overload');
    expect(verdict(timeout, 500)).toBe('overload');
    expect(verdict({ success: false, statusCode: null, durationMs: 3 }, 500)).toBe('overload');
    expect(verdict(status(500), 500)).toBe('overload');
    expect(verdict(status(503), 500)).toBe('overload');
    expect(verdict(status(429), 500)).toBe('overload');
    expect(verdict(status(404, 501), 500)).toBe('overload');
    expect(verdict(status(400), 500)).toBe('neutral');
    expect(verdict(status(410), 500)).toBe('neutral');
    expect(verdict(status(301), 500)).toBe('neutral');
  });

  it("halves on each of the Standard Webhooks guidance's throttle signals, 429, 502, 503 and 504, however fast (issue 69)", () => {
    for (const code of [429, 502, 503, 504]) {
      expect(verdict(status(code, 1), 500)).toBe('overload');
      const limits = endpointLimits({ initial: 8, max: 8, healthyMs: 500 });
      limits.record('e:a', status(code, 1), { seq: 1, lastSeq: 1, inFlight: 1 });
      expect(limits.limit('e:a')).toBe(4);
    }
  });
});

describe('endpoint limits', () => {
  it('starts at initial and gains one per window of healthy answers (as many as the limit), up to max', () => {
    const limits = endpointLimits({ initial: 4, max: 6, healthyMs: 500 });
    expect(limits.limit('e:a')).toBe(4);
    healthy(limits, 'e:a', 3);
    expect(limits.limit('e:a')).toBe(4);
    healthy(limits, 'e:a', 1);
    expect(limits.limit('e:a')).toBe(5);
    healthy(limits, 'e:a', 4);
    expect(limits.limit('e:a')).toBe(5);
    healthy(limits, 'e:a', 1);
    expect(limits.limit('e:a')).toBe(6);
    healthy(limits, 'e:a', 100);
    expect(limits.limit('e:a')).toBe(6);
    expect(limits.limit('e:b')).toBe(4); // each destination its own
  });

  it('a healthy answer counts only while the destination used its whole limit', () => {
    const limits = endpointLimits({ initial: 2, max: 8, healthyMs: 500 });
    for (let i = 0; i < 10; i++) limits.record('e:a', ok, { seq: ++seq, lastSeq: seq, inFlight: 1 });
    expect(limits.limit('e:a')).toBe(2);
    limits.record('e:a', ok, { seq: ++seq, lastSeq: seq, inFlight: 2 });
    limits.record('e:a', ok, { seq: ++seq, lastSeq: seq, inFlight: 3 }); // above it (just halved): counts too
    expect(limits.limit('e:a')).toBe(3);
  });

  it('halves on overload, not below 1, and a new window starts', () => {
    const limits = endpointLimits({ initial: 4, max: 32, healthyMs: 500 });
    healthy(limits, 'e:a', 4 + 5 + 6 + 7 + 8 + 9 + 10);
    expect(limits.limit('e:a')).toBe(11);
    overload(limits, 'e:a', status(503));
    expect(limits.limit('e:a')).toBe(5);
    overload(limits, 'e:a', status(429));
    expect(limits.limit('e:a')).toBe(2);
    overload(limits, 'e:a', status(200, 501));
    expect(limits.limit('e:a')).toBe(1);
    overload(limits, 'e:a');
    expect(limits.limit('e:a')).toBe(1);
    healthy(limits, 'e:a', 1);
    expect(limits.limit('e:a')).toBe(2);
  });

  it('a halving starts a new window: the healthy answers before it no longer count', () => {
    const limits = endpointLimits({ initial: 4, max: 32, healthyMs: 500 });
    healthy(limits, 'e:a', 3);
    overload(limits, 'e:a');
    expect(limits.limit('e:a')).toBe(2);
    healthy(limits, 'e:a', 1);
    expect(limits.limit('e:a')).toBe(2);
    healthy(limits, 'e:a', 1);
    expect(limits.limit('e:a')).toBe(3);
  });

  it('halves once for the attempts that were in flight when it halved', () => {
    const limits = endpointLimits({ initial: 8, max: 32, healthyMs: 500 });
    // Eight in flight (launches 1 to 8); then all of them time out.
    const first = seq + 1;
    seq += 8;
    for (let s = first; s < first + 8; s++) limits.record('e:a', timeout, { seq: s, lastSeq: seq, inFlight: 8 });
    expect(limits.limit('e:a')).toBe(4);
    // One launched after the halving fails: a new event.
    overload(limits, 'e:a');
    expect(limits.limit('e:a')).toBe(2);
  });

  it('neutral answers change nothing', () => {
    const limits = endpointLimits({ initial: 2, max: 8, healthyMs: 500 });
    healthy(limits, 'e:a', 1);
    for (let i = 0; i < 5; i++) limits.record('e:a', status(404), { seq: ++seq, lastSeq: seq, inFlight: 2 });
    expect(limits.limit('e:a')).toBe(2);
    healthy(limits, 'e:a', 1); // the window went on: 2 healthy answers
    expect(limits.limit('e:a')).toBe(3);
  });

  it('max equal to initial: a fixed limit that still halves on overload', () => {
    const limits = endpointLimits({ initial: 4, max: 4, healthyMs: 500 });
    healthy(limits, 'e:a', 50);
    expect(limits.limit('e:a')).toBe(4);
    overload(limits, 'e:a');
    expect(limits.limit('e:a')).toBe(2);
    healthy(limits, 'e:a', 2 + 3);
    expect(limits.limit('e:a')).toBe(4);
  });

  it('forgets every destination when the memory would grow past its size: they start over', () => {
    const limits = endpointLimits({ initial: 1, max: 8, healthyMs: 500, memory: 2 });
    healthy(limits, 'e:a', 1);
    healthy(limits, 'e:b', 1);
    expect([limits.limit('e:a'), limits.limit('e:b')]).toEqual([2, 2]);
    healthy(limits, 'e:c', 1);
    expect([limits.limit('e:a'), limits.limit('e:b'), limits.limit('e:c')]).toEqual([1, 1, 2]);
  });

  it('refuses a start above the max, or not a positive integer', () => {
    expect(() => endpointLimits({ initial: 8, max: 4, healthyMs: 500 })).toThrow(RangeError);
    expect(() => endpointLimits({ initial: 0, max: 4, healthyMs: 500 })).toThrow(RangeError);
    expect(() => endpointLimits({ initial: 1.5, max: 4, healthyMs: 500 })).toThrow(RangeError);
  });
});
