import { describe, expect, it } from 'vitest';
import type { Exchange } from '../core/check.ts';
import { judgedAhead } from './ahead.ts';

const answer = (status: number): Exchange => ({
  request: { method: 'POST', url: 'http://127.0.0.1:1/', headers: {}, body: '', bodyBytes: 0, bodyTruncated: false },
  response: { status, headers: {}, body: '', bodyTruncated: false, durationMs: 0 },
});

/** A fake clock at 100 ms into a second; each attempt answers `status` after `tookMs`. */
function receiver(status: number, tookMs: number) {
  let clock = 1_700_000_000_100;
  const signed: number[] = [];
  const attempt = async (ms: number): Promise<Exchange> => {
    signed.push(ms);
    clock += tookMs;
    return answer(status);
  };
  return { now: () => clock, attempt, signed };
}

describe('judgedAhead: a timestamp past the future edge of the window', () => {
  it('takes a refusal at once, however late it came', async () => {
    const r = receiver(401, 5_000);
    expect((await judgedAhead(r.attempt, r.now)).response.status).toBe(401);
    expect(r.signed).toHaveLength(1);
  });

  it('takes an acceptance that came within the second it was signed in: the receiver saw t one second past its window', async () => {
    const r = receiver(200, 800);
    expect((await judgedAhead(r.attempt, r.now)).response.status).toBe(200);
    expect(r.signed).toHaveLength(1);
  });

  it('asks again, with a new t, when the acceptance came after that second ended (the receiver may have seen t inside its window), three times at most', async () => {
    const r = receiver(200, 1_000);
    expect((await judgedAhead(r.attempt, r.now)).response.status).toBe(200);
    expect(r.signed).toEqual([1_700_000_000_100, 1_700_000_001_100, 1_700_000_002_100]);
  });
});
