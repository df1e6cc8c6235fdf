import { describe, expect, it } from 'vitest';
import { judgeListenRun, type Line } from './listen.ts';

const port: Line = { port: 4000 };
const created = (id: string): Line => ({ verified: id, type: 'order.created' });
const paid = (id: string): Line => ({ verified: id, type: 'order.paid' });

describe('judgeListenRun: the kill-and-resume check of check:packages, by event id', () => {
  it('accepts each event once', () => {
    expect(judgeListenRun([port, created('e1'), paid('e2'), created('e3'), paid('e4')], 3)).toEqual({ ok: true, redelivered: 0 });
  });

  it('accepts the killed session\'s last event forwarded again by the next run (its cursor was not saved yet)', () => {
    expect(judgeListenRun([port, created('e1'), paid('e2'), paid('e2'), created('e3'), paid('e4')], 3)).toEqual({ ok: true, redelivered: 1 });
  });

  it('refuses a lost event', () => {
    const verdict = judgeListenRun([port, created('e1'), paid('e2'), paid('e4')], 3);
    expect(verdict).toEqual({ ok: false, why: 'events in first-arrival order were order.created,order.paid,order.paid, expected order.created,order.paid,order.created,order.paid' });
  });

  it('refuses an event the second session forwarded twice', () => {
    const verdict = judgeListenRun([port, created('e1'), paid('e2'), created('e3'), created('e3'), paid('e4')], 3);
    expect(verdict).toEqual({ ok: false, why: 'e3 forwarded twice by the session after the restart' });
  });

  it('refuses events out of order and any forward the receiver refused', () => {
    expect(judgeListenRun([port, created('e1'), paid('e2'), paid('e4'), created('e3')], 3).ok).toBe(false);
    expect(judgeListenRun([port, created('e1'), paid('e2'), { refused: 'Error: bad signature' }, created('e3'), paid('e4')], 3)).toEqual({
      ok: false,
      why: '1 forward(s) refused by the receiver',
    });
  });
});
