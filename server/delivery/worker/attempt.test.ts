import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../client/webhooks/index.ts';
import { ManualClock } from '../../domain/clock.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, nextAttemptAt } from '../schedule.ts';
import type { SendOutcome, Sender } from '../sender.ts';
import { captureLogger, claimedDelivery } from '../testing.ts';
import { attempter, type AttemptDeps } from './attempt.ts';
import { toLease } from './lease.ts';

// One attempt alone: a fake sender that records what it was asked to send.

const SECRET = 'whsec_attempt_test_secret_0123456789abcdef';

function setup(answer: SendOutcome, openSecret: AttemptDeps['openSecret'] = () => SECRET) {
  const clock = new ManualClock();
  const sent: Array<Parameters<Sender['send']>[0]> = [];
  const sender: Sender = { timeoutMs: 1_000, close: async () => undefined, send: async (req) => (sent.push(req), answer) };
  const logs = captureLogger();
  const attempt = attempter({ sender, clock, retry: { scale: 1, random: () => 0.5 }, schedule: nextAttemptAt, log: logs.log, openSecret });
  return { clock, sent, attempt, logs };
}

const ok: SendOutcome = { outcome: 'response', statusCode: 200, errorClass: null, responseBody: 'ok', success: true, durationMs: 12 };
const refused: SendOutcome = { outcome: 'error', statusCode: null, errorClass: 'connection_refused', responseBody: null, success: false, durationMs: 3 };

describe('one attempt', () => {
  it("signs the event's exact payload with the attempt's own time and records a 2xx as delivered", async () => {
    const { clock, sent, attempt } = setup(ok);
    const lease = toLease(claimedDelivery({ leaseExpiresAt: 123_456 }));
    const done = await attempt(lease, new AbortController().signal);
    expect(sent).toHaveLength(1);
    const req = sent[0]!;
    expect(req.url).toBe(lease.delivery.url);
    expect(req.body).toBe(lease.event.payload);
    const verified = verifyWebhook({ rawBody: req.body, headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v])), secrets: SECRET, now: () => clock.now() });
    expect(verified.eventId).toBe(lease.event.id);
    expect(done.completion).toEqual({
      deliveryId: lease.delivery.id,
      leaseExpiresAt: 123_456,
      result: {
        attempt: expect.objectContaining({ number: 1, cycle: 1, startedAt: clock.now(), signatureTimestamp: Math.floor(clock.now() / 1000), statusCode: 200, success: true, durationMs: 12 }),
        state: 'delivered',
        nextAttemptAt: null,
        deliveredAt: clock.now(),
      },
    });
    expect(done.summary).toMatchObject({ deliveryId: lease.delivery.id, attempt: 1, state: 'delivered' });
  });

  it("a failure is pending until the schedule's next time; the last attempt of the cycle fails", async () => {
    const { clock, attempt } = setup(refused);
    const first = await attempt(toLease(claimedDelivery()), new AbortController().signal);
    expect(first.completion.result).toMatchObject({ state: 'pending', nextAttemptAt: clock.now() + RETRY_DELAYS_MS[0]!, deliveredAt: null, attempt: { errorClass: 'connection_refused', number: 1 } });
    const last = await attempt(toLease(claimedDelivery({ attemptCount: MAX_ATTEMPTS - 1 })), new AbortController().signal);
    expect(last.completion.result).toMatchObject({ state: 'failed', nextAttemptAt: null, attempt: { number: MAX_ATTEMPTS } });
  });

  it('a secret that cannot be opened sends nothing: a failed attempt, logged without the secret', async () => {
    const { sent, attempt, logs } = setup(ok, () => {
      throw new Error('cannot open the sealed value');
    });
    const done = await attempt(toLease(claimedDelivery()), new AbortController().signal);
    expect(sent).toEqual([]);
    expect(done.completion.result).toMatchObject({ state: 'pending', attempt: { outcome: 'error', errorClass: 'network_error', success: false, durationMs: 0 } });
    expect(logs.lines.join('')).toContain('cannot sign the delivery');
    expect(logs.lines.join('')).not.toContain('whsec_');
  });

  it('passes the abort signal to the send', async () => {
    const { sent, attempt } = setup(ok);
    const abort = new AbortController();
    await attempt(toLease(claimedDelivery()), abort.signal);
    expect(sent[0]!.signal).toBe(abort.signal);
  });
});
