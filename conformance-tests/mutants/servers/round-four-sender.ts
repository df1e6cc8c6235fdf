// Round four of the broken webhook senders (issue 41): each is the real app with one defect
// in its delivery, through the schedule or the Sender seam (sender-seam.ts).
import { createHmac } from 'node:crypto';
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { MAX_ATTEMPTS, nextAttemptAt } from '../../../server/delivery/schedule.ts';
import { createSender } from '../../../server/delivery/sender.ts';
import type { SendRequest } from '../../../server/delivery/sender.ts';
import { SIGNATURE_HEADER } from '../../../signing/signature.ts';
import { eventIdOf, headerName, resigned, withSender } from './sender-seam.ts';
import type { Send } from './sender-seam.ts';
import { wrapApp } from './wrap.ts';
import type { ServerMutant } from './mutant.ts';

/** A cycle ends after nine attempts. */
function stopsAfterNine(services: Services, config: Config): BuiltApp {
  return buildApp(services, config, {
    delivery: { schedule: (attempt, now, policy) => (attempt >= MAX_ATTEMPTS - 1 ? null : nextAttemptAt(attempt, now, policy)) }, // the defect
  });
}

/** Each attempt is cut at 12 s instead of 10 s. */
function timeoutTwelveSeconds(services: Services, config: Config): BuiltApp {
  return buildApp(services, config, {
    delivery: {
      sender: (opts) => {
        const real = createSender({ ...opts, timeoutMs: 12_000 }); // the defect
        // It reports the contract's deadline, so the engine's lease (sized from it) still covers 12 s.
        return { timeoutMs: opts.timeoutMs ?? 10_000, close: () => real.close(), send: (req) => real.send(req) };
      },
    },
  });
}

/** Only 200 counts as delivered: another 2xx is retried. */
function only200(services: Services, config: Config): BuiltApp {
  return withSender(services, config, (real) => async (req) => {
    const outcome = await real(req);
    return { ...outcome, success: outcome.statusCode === 200 }; // the defect
  });
}

/** After a rotation every request also carries a v1 made with the previous secret (dual signing). */
function signsWithPreviousToo(services: Services, config: Config): BuiltApp {
  // Per kind of secret (order webhooks carry apiVersion, callbacks do not): the last one used and the one before.
  const last = new Map<string, string>();
  const previous = new Map<string, string>();
  return withSender(services, config, (real, secretOf) => async (req) => {
    const secret = secretOf(req);
    const name = headerName(req, SIGNATURE_HEADER) ?? SIGNATURE_HEADER;
    const t = /^t=(\d+)/.exec(req.headers[name] ?? '')?.[1];
    if (secret === null || t === undefined) return real(req);
    const kind = req.body.includes('"apiVersion"') ? 'webhook' : 'callback';
    const before = last.get(kind);
    if (before !== undefined && before !== secret) previous.set(kind, before);
    last.set(kind, secret);
    const old = previous.get(kind);
    if (old === undefined) return real(req);
    const extra = createHmac('sha256', Buffer.from(old, 'utf8')).update(`${t}.${req.body}`, 'utf8').digest('hex');
    return real({ ...req, headers: { ...req.headers, [name]: `${req.headers[name]},v1=${extra}` } }); // the defect
  });
}

/** A delivery left pending by a URL edit is sent to the next URL under a new event id. */
function oldVersionNewId(services: Services, config: Config): BuiltApp {
  const left = new Map<string, SendRequest>();
  const sends = new Map<string, number>();
  return withSender(services, config, (real, secretOf) => async (req) => {
    const id = eventIdOf(req) ?? '';
    sends.set(id, (sends.get(id) ?? 0) + 1);
    left.delete(id);
    for (const [oldId, old] of left) {
      if (old.url === req.url) continue;
      left.delete(oldId);
      const secret = secretOf(req);
      const freshId = createHmac('sha256', 'new-id').update(oldId).digest('hex');
      if (secret !== null) await real({ ...resigned(old, secret, old.body, freshId), url: req.url }); // the defect
    }
    const outcome = await real(req);
    if (!outcome.success && (sends.get(id) ?? 0) < MAX_ATTEMPTS) left.set(id, req);
    return outcome;
  });
}

/** A surplus deposit on a paid order re-sends its order.paid (same event id, fresh signature). */
function surplusResendsPaid(services: Services, config: Config): BuiltApp {
  const paid = new Map<string, SendRequest>();
  let send: Send | null = null;
  let secretOfReq: ((req: SendRequest) => string | null) | null = null;
  const built = withSender(services, config, (real, secretOf) => {
    send = real;
    secretOfReq = secretOf;
    return async (req) => {
      const body = JSON.parse(req.body) as { type?: string; data?: { orderId?: string } };
      if (body.type === 'order.paid' && body.data?.orderId) paid.set(body.data.orderId, req);
      return real(req);
    };
  });
  return wrapApp(built, () => async (c, next) => {
    await next();
    const orderId = /^\/sandbox\/orders\/([^/]+)\/deposits$/.exec(c.req.path)?.[1];
    const earlier = orderId === undefined ? undefined : paid.get(orderId);
    const secret = earlier && secretOfReq ? secretOfReq(earlier) : null;
    if (c.req.method === 'POST' && c.res.status < 300 && earlier && secret !== null && send) await send(resigned(earlier, secret, earlier.body)); // the defect
  });
}

const only = (ids: string[]): RegExp => new RegExp(`^(${ids.map((i) => i.replace(/\./g, '\\.')).join('|')})$`);
const NINE = ['sender.attempts.exactly-ten', 'sender.retry.manual-same-event', 'sender.retry.manual-fresh-timestamp'];
const ROTATION = ['sender.rotation.new-secret', 'sender.rotation.callback-secret'];

export const ROUND_FOUR_SENDER_MUTANTS: readonly ServerMutant[] = [
  // No failed delivery without ten attempts: the manual retry checks cannot run, and fail.
  { name: 'stops-after-nine', defect: 'a cycle ends after nine attempts', target: 'sender', build: stopsAfterNine, mustFail: ['sender.attempts.exactly-ten'], failsOnly: only(NINE) },
  { name: 'timeout-12s', defect: 'each attempt is cut at 12 s, not 10 s', target: 'sender', build: timeoutTwelveSeconds, mustFail: ['sender.timeout.10s'], failsOnly: only(['sender.timeout.10s']), slow: true },
  { name: 'only-200-success', defect: 'only a 200 answer delivers; another 2xx is retried', target: 'sender', build: only200, mustFail: ['sender.success.any-2xx'], failsOnly: only(['sender.success.any-2xx']) },
  { name: 'signs-with-previous-too', defect: 'after a rotation the header carries a v1 made with the previous secret beside the new one', target: 'sender', build: signsWithPreviousToo, mustFail: ROTATION, failsOnly: only(ROTATION) },
  { name: 'old-version-new-id', defect: "a delivery left pending by a URL edit is sent to the new URL under a new event id", target: 'sender', build: oldVersionNewId, mustFail: ['sender.version.url-edit'], failsOnly: only(['sender.version.url-edit']) },
  { name: 'surplus-resends-paid', defect: 'a surplus deposit after order.paid re-sends order.paid under its old event id', target: 'sender', build: surplusResendsPaid, mustFail: ['sender.surplus.no-webhook'], failsOnly: only(['sender.surplus.no-webhook']) },
];
