import { describe, expect, it } from 'vitest';
import type { Exchange } from '../core/check.ts';
import { judgedAhead } from './ahead.ts';

const answer = (status: number): Exchange => ({
  request: { method: 'POST', url: 'http://127.0.0.1:1/', headers: {}, body: '', bodyBytes: 0, bodyTruncated: false },
  response: { status, headers: {}, body: '', bodyTruncated: false, durationMs: 0 },
});

/** A fake clock at `startMs` (100 ms into a second); each attempt answers `status` after `tookMs`. */
function receiver(status: number, tookMs: number, startMs = 1_700_000_000_100) {
  let clock = startMs;
  const signed: number[] = [];
  const waited: number[] = [];
  const attempt = async (ms: number): Promise<Exchange> => {
    signed.push(ms);
    clock += tookMs;
    return answer(status);
  };
  const wait = async (ms: number): Promise<void> => {
    waited.push(ms);
    clock += ms;
  };
  return { now: () => clock, wait, attempt, signed, waited };
}

describe('judgedAhead: a timestamp past the future edge of the window', () => {
  it('takes a refusal at once, however late it came', async () => {
    const r = receiver(401, 5_000);
    expect((await judgedAhead(r.attempt, r.now, r.wait)).response.status).toBe(401);
    expect(r.signed).toHaveLength(1);
  });

  it('takes an acceptance that came within the second it was signed in: the receiver saw t one second past its window', async () => {
    const r = receiver(200, 800);
    expect((await judgedAhead(r.attempt, r.now, r.wait)).response.status).toBe(200);
    expect(r.signed).toHaveLength(1);
  });

  it('asks again, with a new t, when the acceptance came after that second ended (the receiver may have seen t inside its window), three times at most', async () => {
    const r = receiver(200, 1_000);
    expect((await judgedAhead(r.attempt, r.now, r.wait)).response.status).toBe(200);
    expect(r.signed).toEqual([1_700_000_000_100, 1_700_000_001_100, 1_700_000_002_100]);
  });

  it('late in a second, waits for the next one before signing, so the answer has at least 400 ms to come within it', async () => {
    const r = receiver(200, 300, 1_700_000_000_700);
    expect((await judgedAhead(r.attempt, r.now, r.wait)).response.status).toBe(200);
    expect(r.waited).toEqual([305]);
    expect(r.signed).toEqual([1_700_000_001_005]);
  });
});
