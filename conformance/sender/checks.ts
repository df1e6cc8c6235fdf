// The checks of the `sender` target. The suite runs its own receiver, points the tenant
// environment's webhook endpoint at it, triggers events and watches what arrives, one
// scenario per receiver path (a URL edit between scenarios, so none sees another's deliveries):
//
//   events    every message of the order webhook channel (AsyncAPI walk), answered 200: headers,
//             signature and payload of each delivery; webhook.test carries data.environment
//   callback  the payout-completed callback to a payout's notifyUrl (callback secret)
//   retry     500 on the first attempt (held 1.2 s, so that the retry is signed a second
//             later), then 200: the retry comes, same event id and body, a later t
//   redirect  302 to another path of the suite on the first attempt: never followed, retried
//   slow      the first attempt is held: the sender cuts it at 10 s and tries again
//   attempts  500 always: at most ten attempts
//   recover   four orders delivered, the middle two's time range recovered twice (recover.ts)
//   disabled  the endpoint disabled, an event triggered: nothing arrives
//
// Scenarios run lazily, once, on the first check that needs them; the checks are ordered so
// that each scenario runs after the previous one finished.
import { performance } from 'node:perf_hooks';
import { MAX_DELIVERY_ATTEMPTS } from '../../generated/vocabulary.ts';
import type { ChannelSpec, MessageSpec } from '../core/asyncapi.ts';
import type { Check, CheckOutcome, Exchange, SpecRule } from '../core/check.ts';
import { defineCheck, type UncatalogedRule } from '../core/define.ts';
import { fail, pass, skip } from '../core/outcome.ts';
import { SuiteReceiver, answer, answerAfter } from './receiver.ts';
import { FAILING_ANSWER_HOLD_MS, failureKnownMono, staleTimestamp } from './fresh.ts';
import { recoverChecks } from './recover.ts';
import { recoverAfterChangeChecks } from './recover-change.ts';
import { rotationChecks } from './rotation.ts';
import { fanOutChecks } from './fan-out.ts';
import { callbackOutcomeChecks, fieldProblems, type Payout } from './outcomes.ts';
import { pendingChangeChecks } from './pending-change.ts';
import { recoverPacedChecks } from './recover-paced.ts';
import { healthChecks } from './health.ts';
import { schemeChecks } from './scheme.ts';
import { successChecks } from './success.ts';
import { retryAfterChecks } from './retry-after.ts';
import type { AddCheck } from './rotation.ts';
import type { Received, Responder } from './receiver.ts';
import {
  CALLBACK_SIGNATURE_RULE,
  CONFIGURE_RULE,
  DISABLED_RULE,
  FRESH_T_RULE,
  HEADERS_RULE,
  MANUAL_RETRY_RULE,
  PAYLOAD_RULE,
  REDIRECT_RULE,
  RETRY_RULE,
  SIGNATURE_RULE,
  SURPLUS_RULE,
  TEN_ATTEMPTS_RULE,
  TEST_WEBHOOK_RULE,
  TIMEOUT_RULE,
  SENDER,
  VERSION_RULE,
} from './rules.ts';
import type { SenderRule } from './rules.ts';
import { StepFailed } from './session.ts';
import type { Endpoint, SenderSession } from './session.ts';
import { asExchange, eventIdOf, headerProblems, parseBody, payloadProblems, signatureProblems, signatureTimestamp } from './verify.ts';

const TARGET = SENDER.target;
/** The contract's attempt deadline, and how far from it a cut still counts as "at 10 s". */
export const ATTEMPT_TIMEOUT_MS = 10_000;
const CUT_EARLIEST_MS = 9_000;
/** Tight enough to tell a 10 s deadline from a 12 s one (issue 41). */
const CUT_LATEST_MS = 11_000;

export interface SenderChecksOptions {
  session: SenderSession;
  receiver: SuiteReceiver;
  channels: ChannelSpec[];
  callbackSecret?: string;
  skipSlow: boolean;
  /** How long to wait for an expected delivery. */
  waitMs: number;
  /** How long to watch the always-500 endpoint for its ten attempts. */
  attemptsWindowMs: number;
  /** How long nothing must arrive (disabled endpoint, redirect target). */
  quietMs: number;
}

type Json = Record<string, unknown>;

/** A trigger for a message of the order webhook channel, by message name. */
type Trigger = (s: SenderSession, evidence: Exchange[], signal: AbortSignal) => Promise<(r: Received) => boolean>;

const byOrder =
  (type: string, orderId: string) =>
  (r: Received): boolean => {
    const b = parseBody(r) as { type?: unknown; data?: { orderId?: unknown } } | undefined;
    return b?.type === type && b.data?.orderId === orderId;
  };

/** How each message of the order webhook channel is made to happen. A message missing here is reported as skipped. */
const TRIGGERS: Record<string, Trigger> = {
  'order.created': async (s, ev, signal) => byOrder('order.created', (await s.createOrder(ev, signal)).orderId),
  'order.paid': async (s, ev, signal) => {
    const order = await s.createOrder(ev, signal);
    await s.payOrder(order, ev, signal);
    return byOrder('order.paid', order.orderId);
  },
  'order.payment_review_required': async (s, ev, signal) => {
    const order = await s.createOrder(ev, signal);
    await s.reviewOrder(order.orderId, ev, signal);
    return byOrder('order.payment_review_required', order.orderId);
  },
  'webhook.test': async (s, ev, signal) => {
    const eventId = await s.sendTest(ev, signal);
    return (r) => eventIdOf(r) === eventId;
  },
};

interface Observed {
  deliveries: Received[];
  /** Why nothing could be triggered (the trigger step failed). */
  unavailable?: StepFailed;
  evidence: Exchange[];
}

export function senderChecks(o: SenderChecksOptions): Check[] {
  const { session, receiver } = o;
  const checks: Check[] = [];
  const memo = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, make: () => Promise<T>): Promise<T> => {
    let p = memo.get(key) as Promise<T> | undefined;
    if (!p) {
      p = make();
      memo.set(key, p);
    }
    return p;
  };
  const add: AddCheck = (id, group, title, rules, run) => {
    checks.push(defineCheck({
      book: SENDER,
      id,
      title,
      group,
      rules,
      run: async (ctx) => {
        try {
          return await run(ctx);
        } catch (err) {
          if (err instanceof StepFailed) {
            if (err.unavailable) return skip(err.message, err.exchanges.map((x) => `${x.label ?? ''}: ${x.request.method} ${x.request.url} → ${x.response.status ?? 'no answer'}`));
            return fail(`a step the check needs failed: ${err.message}`, rules[0] ?? CONFIGURE_RULE, err.exchanges);
          }
          throw err;
        }
      },
    }));
  };

  // ---- setup --------------------------------------------------------------------------------
  const setupEvidence: Exchange[] = [];
  receiver.route(session.path('events'), answer(200));
  const configured = (): Promise<Endpoint> => once('configure', () => session.configure('events', setupEvidence));
  const endpoint = async (): Promise<Endpoint> => {
    try {
      return await configured();
    } catch {
      throw new StepFailed(`the webhook endpoint could not be pointed at the suite (see ${TARGET}.endpoint.configure)`, [], true);
    }
  };
  add('endpoint.configure', 'setup', "points the environment's webhook endpoint at the suite's receiver and learns its secret", [CONFIGURE_RULE], async () => {
    try {
      const e = await configured();
      return pass([
        e.created
          ? `created endpoint ${e.id} (${e.environment}) at ${session.url('events')}`
          : `updated the active endpoint ${e.id} (${e.environment}) to ${session.url('events')} and rotated its secret (the only way to learn it)`,
      ]);
    } catch (err) {
      if (err instanceof StepFailed) return fail(err.message, CONFIGURE_RULE, err.exchanges);
      throw err;
    }
  });

  // ---- events: every message of the order webhook channel -------------------------------------
  const orderChannel = o.channels.find((c) => c.serverNames.includes('merchant')) ?? o.channels[0];
  // The operational events (webhook_endpoint.*, issue 69) never reach the session's endpoint of
  // every type: health.* judge them at an endpoint subscribed to them.
  const messages = (orderChannel?.messages ?? []).filter((m) => !m.name.startsWith('webhook_endpoint.'));
  const events = (): Promise<Map<string, Observed>> =>
    once('events', async () => {
      await endpoint();
      const signal = new AbortController().signal;
      const expected = new Map<string, { match: (r: Received) => boolean } | { unavailable: StepFailed }>();
      const evidence = new Map<string, Exchange[]>();
      for (const m of messages) {
        const trigger = TRIGGERS[m.name];
        const ev: Exchange[] = [];
        evidence.set(m.name, ev);
        if (!trigger) {
          expected.set(m.name, { unavailable: new StepFailed(`no trigger is known for ${m.name}; add one to conformance/sender/checks.ts`, [], true) });
          continue;
        }
        try {
          expected.set(m.name, { match: await trigger(session, ev, signal) });
        } catch (err) {
          if (!(err instanceof StepFailed)) throw err;
          // Not reached only when the implementation lacks the operation (a route missing); any other failed step fails the checks.
          expected.set(m.name, { unavailable: new StepFailed(`could not trigger ${m.name}: ${err.message}`, err.exchanges, err.unavailable) });
        }
      }
      const path = session.path('events');
      const matching = (name: string): Received[] => {
        const e = expected.get(name);
        return e && 'match' in e ? receiver.at(path).filter(e.match) : [];
      };
      await receiver.until(() => [...expected.entries()].every(([name, e]) => 'unavailable' in e || matching(name).length > 0), o.waitMs);
      const out = new Map<string, Observed>();
      for (const [name, e] of expected) {
        out.set(name, 'unavailable' in e ? { deliveries: [], unavailable: e.unavailable, evidence: evidence.get(name) ?? [] } : { deliveries: matching(name), evidence: evidence.get(name) ?? [] });
      }
      return out;
    });

  for (const m of messages) {
    const observed = async (): Promise<Observed> => (await events()).get(m.name) ?? { deliveries: [], evidence: [] };
    deliveryChecks(m, m.name, observed, () => endpoint().then((e) => e.secret), SIGNATURE_RULE);
    if (m.name === 'webhook.test') {
      add('webhook.test.environment', m.name, 'webhook.test carries data.environment: the environment of the endpoint', [TEST_WEBHOOK_RULE], async () => {
        const seen = await observed();
        const first = present(seen);
        const env = (await endpoint()).environment;
        const data = (parseBody(first) as { data?: { environment?: unknown } } | undefined)?.data;
        if (data?.environment !== env) return fail(`data.environment is ${JSON.stringify(data?.environment)}, not the endpoint's environment ${JSON.stringify(env)}`, TEST_WEBHOOK_RULE, [asExchange(first)]);
        return pass();
      });
    }
  }

  // ---- the payout-completed callback -----------------------------------------------------------
  const callbackChannel = o.channels.find((c) => c.serverNames.includes('notifyUrl'));
  const callbackMessage = callbackChannel?.messages[0];
  if (callbackMessage) {
    receiver.route(session.path('callback'), answer(200));
    let payout: Payout | null = null;
    const callback = (): Promise<Observed> =>
      once('callback', async () => {
        const evidence: Exchange[] = [];
        try {
          payout = await session.settledPayout('callback', evidence);
        } catch (err) {
          if (!(err instanceof StepFailed)) throw err;
          return { deliveries: [], unavailable: new StepFailed(`could not trigger the callback: ${err.message}`, err.exchanges, err.unavailable), evidence };
        }
        const path = session.path('callback');
        await receiver.until(() => receiver.at(path).length > 0, o.waitMs);
        return { deliveries: receiver.at(path), evidence };
      });
    const secret = async (): Promise<string> => {
      if (!o.callbackSecret) throw new StepFailed('needs --callback-secret (the tenant environment\'s callback secret) to verify the callback\'s signature', [], true);
      return o.callbackSecret;
    };
    deliveryChecks(callbackMessage, callbackMessage.name, callback, secret, CALLBACK_SIGNATURE_RULE, (r) => fieldProblems(r, payout, 'success'));
    // The other settlement outcomes' callbacks (outcomes.ts), after the success one.
    callbackOutcomeChecks({
      add,
      session,
      receiver,
      message: callbackMessage,
      waitMs: o.waitMs,
      ...(o.callbackSecret ? { callbackSecret: o.callbackSecret } : {}),
      success: async () => ({ payout, ...(await callback()) }),
    });
  }

  /** headers / signature / payload of every delivery of one message. */
  function deliveryChecks(
    m: MessageSpec,
    group: string,
    observed: () => Promise<Observed>,
    secret: () => Promise<string>,
    signatureRule: SenderRule,
    extra: (r: Received) => string[] = () => [],
  ): void {
    const base = m.name;
    const messageRule: UncatalogedRule = { source: m.pointer, quote: `${m.title}: headers and payload as the message defines them` };
    add(`${base}.headers`, group, `${m.name} deliveries carry Content-Type application/json, Service-Event-Id${m.bodyCarriesEventId ? ' (= the body id)' : ''} and a well-formed Service-Signature`, [HEADERS_RULE, messageRule], async () => {
      const seen = await observed();
      if (seen.unavailable) throw seen.unavailable;
      if (seen.deliveries.length === 0) return fail(`no ${m.name} delivery arrived within ${o.waitMs / 1000} s of the trigger`, HEADERS_RULE, seen.evidence);
      return every(seen.deliveries, (r) => headerProblems(r, m), HEADERS_RULE);
    });
    add(`${base}.signature`, group, `${m.name} deliveries are signed: HMAC-SHA256 over "<t>.<raw body>" with the secret`, [signatureRule, SIGNATURE_RULE], async () => {
      const seen = await observed();
      if (seen.unavailable) throw seen.unavailable;
      const key = await secret();
      if (seen.deliveries.length === 0) return fail(`no ${m.name} delivery arrived within ${o.waitMs / 1000} s of the trigger (see ${TARGET}.${base}.headers)`, signatureRule, seen.evidence);
      return every(seen.deliveries, (r) => signatureProblems(r, key), signatureRule);
    });
    add(`${base}.payload`, group, `${m.name} deliveries carry a body valid against the message's payload schema`, [PAYLOAD_RULE, messageRule], async () => {
      const seen = await observed();
      if (seen.unavailable) throw seen.unavailable;
      if (seen.deliveries.length === 0) return fail(`no ${m.name} delivery arrived within ${o.waitMs / 1000} s of the trigger (see ${TARGET}.${base}.headers)`, PAYLOAD_RULE, seen.evidence);
      return every(seen.deliveries, (r) => [...payloadProblems(r, m), ...extra(r)], PAYLOAD_RULE);
    });
  }

  // ---- retries after a failure ------------------------------------------------------------------
  /** A scenario: point the endpoint at `name`, answer with `responder`, trigger order.created, watch. */
  const scenario = (name: string, responder: Responder, watch: (path: string, signal: AbortSignal) => Promise<void>): (() => Promise<{ path: string; evidence: Exchange[] }>) => {
    receiver.route(session.path(name), responder);
    return () =>
      once(name, async () => {
        await endpoint();
        const evidence: Exchange[] = [];
        const signal = new AbortController().signal;
        await session.pointTo(name, evidence, signal);
        await session.createOrder(evidence, signal);
        await watch(session.path(name), signal);
        return { path: session.path(name), evidence };
      });
  };
  const attemptsOf = (path: string): Received[] => {
    const all = receiver.at(path);
    const first = all[0] && eventIdOf(all[0]);
    return all.filter((r) => eventIdOf(r) === first);
  };
  const firstFailsThen200 = (first: Responder): Responder => {
    const seen = new Set<string>();
    return (r, res) => {
      const id = eventIdOf(r) ?? '';
      if (seen.has(id)) return answer(200)(r, res);
      seen.add(id);
      first(r, res);
    };
  };

  const retry = scenario('retry', firstFailsThen200(answerAfter(FAILING_ANSWER_HOLD_MS, 500)), async (path, signal) => {
    await receiver.until(() => attemptsOf(path).length >= 2, o.waitMs, signal);
    // A 2xx ends the delivery: give a third attempt a moment to show up if it wrongly would.
    await SuiteReceiver.sleep(1_000, signal);
  });
  add('retry.after-failure', 'delivery rules', 'after a 500 the delivery is retried with the same event id and body, and stops after the 2xx', [RETRY_RULE], async () => {
    const { path, evidence } = await retry();
    const attempts = attemptsOf(path);
    const shown = [...evidence, ...attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`))];
    if (attempts.length === 0) return fail(`no delivery arrived within ${o.waitMs / 1000} s of creating an order`, RETRY_RULE, shown);
    if (attempts.length === 1) return fail(`the first attempt was answered 500 and no second attempt arrived within ${o.waitMs / 1000} s`, RETRY_RULE, shown);
    const [a, b] = attempts as [Received, Received];
    if (!a.body.equals(b.body)) return fail('the retry carries another body than the first attempt', RETRY_RULE, shown);
    if (attempts.length > 2) return fail(`${attempts.length} attempts arrived; the second was answered 200, which ends the delivery`, RETRY_RULE, shown);
    const extra = receiver.at(path).filter((r) => eventIdOf(r) !== eventIdOf(a));
    if (extra.length > 0) return fail(`the retry carries another Service-Event-Id (${eventIdOf(extra[0]!)}) than the first attempt (${eventIdOf(a)})`, RETRY_RULE, shown);
    return pass([`second attempt ${Math.round(b.receivedMono - a.receivedMono)} ms after the first`]);
  });
  add('retry.fresh-timestamp', 'delivery rules', 'each attempt is signed anew: t is the time of that attempt, later than the earlier attempt\'s, and the signature verifies', [FRESH_T_RULE, SIGNATURE_RULE], async () => {
    const { path } = await retry();
    const secret = (await endpoint()).secret;
    const attempts = attemptsOf(path);
    if (attempts.length < 2) return fail(`fewer than two attempts arrived within ${o.waitMs / 1000} s (see ${TARGET}.retry.after-failure)`, FRESH_T_RULE, attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`)));
    const shown = attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`));
    for (const [i, r] of attempts.entries()) {
      const problems = signatureProblems(r, secret);
      if (problems.length > 0) return fail(`attempt ${i + 1}: ${problems.join('; ')}`, SIGNATURE_RULE, shown);
    }
    // t describes the attempt: its offset from the arrival time is the same for every attempt
    // (whatever the clocks' skew), so attempts seconds apart carry different t.
    for (const [i, r] of attempts.slice(1).entries()) {
      const stale = staleTimestamp(attempts[i]!, r, failureKnownMono(attempts[i]!));
      if (stale) return fail(`attempt ${i + 2}: ${stale}`, FRESH_T_RULE, shown);
    }
    const offsets = attempts.map((r) => (signatureTimestamp(r) ?? 0) - r.receivedAt / 1000);
    const spread = Math.max(...offsets) - Math.min(...offsets);
    if (spread > 2) {
      return fail(
        `t does not follow the attempts: attempt times and t differ by ${offsets.map((x) => `${x.toFixed(1)} s`).join(', ')} (t of each attempt: ${attempts.map((r) => signatureTimestamp(r)).join(', ')})`,
        FRESH_T_RULE,
        shown,
      );
    }
    return pass();
  });

  // ---- only a 2xx counts: a 4xx is unsuccessful too (a 409: a 410 disables the endpoint, issue 69) -----
  const clientError = scenario('client-error', firstFailsThen200(answer(409)), async (path, signal) => {
    await receiver.until(() => attemptsOf(path).length >= 2, o.waitMs, signal);
  });
  add('retry.after-4xx', 'delivery rules', 'a 409 answer counts as unsuccessful (only a 2xx delivers): the delivery is retried', [RETRY_RULE], async () => {
    const { path, evidence } = await clientError();
    const attempts = attemptsOf(path);
    const shown = [...evidence, ...attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`))];
    if (attempts.length === 0) return fail(`no delivery arrived within ${o.waitMs / 1000} s of creating an order`, RETRY_RULE, shown);
    if (attempts.length < 2) return fail(`the first attempt was answered 409 and no second attempt arrived within ${o.waitMs / 1000} s: a non-2xx answer is unsuccessful and retried`, RETRY_RULE, shown);
    return pass();
  });

  // ---- redirects are not followed -----------------------------------------------------------------
  const targetPath = session.path('redirect-target');
  receiver.route(targetPath, answer(200));
  const redirect = scenario('redirect', firstFailsThen200(answer(302, { location: session.url('redirect-target') })), async (path, signal) => {
    await receiver.until(() => attemptsOf(path).length >= 2 || receiver.at(targetPath).length > 0, o.waitMs, signal);
    await SuiteReceiver.sleep(Math.min(o.quietMs, 2_000), signal);
  });
  add('redirect.not-followed', 'delivery rules', 'a 302 answer is not followed: the Location (another path of the suite) receives nothing', [REDIRECT_RULE], async () => {
    const { path, evidence } = await redirect();
    const followed = receiver.at(targetPath);
    const shown = [...evidence, ...receiver.at(path).map((r, i) => asExchange(r, `attempt ${i + 1}`)), ...followed.map((r) => asExchange(r, 'request to the redirect target'))];
    if (receiver.at(path).length === 0) return fail(`no delivery arrived within ${o.waitMs / 1000} s of creating an order`, REDIRECT_RULE, shown);
    if (followed.length > 0) return fail(`the sender followed the redirect: ${followed.length} request(s) reached ${targetPath}`, REDIRECT_RULE, shown);
    return pass();
  });
  add('redirect.retried', 'delivery rules', 'a 302 answer counts as unsuccessful: the delivery is retried', [REDIRECT_RULE, RETRY_RULE], async () => {
    const { path, evidence } = await redirect();
    const attempts = attemptsOf(path);
    if (attempts.length === 0) return fail(`no delivery arrived within ${o.waitMs / 1000} s of creating an order`, REDIRECT_RULE, evidence);
    if (attempts.length < 2) {
      return fail('after the 302 no second attempt arrived: a redirect must count as unsuccessful and be retried', REDIRECT_RULE, [...evidence, ...attempts.map((r) => asExchange(r))]);
    }
    return pass();
  });

  // ---- a slow answer is cut at 10 s -------------------------------------------------------------
  const slow = scenario('slow', firstFailsThen200(() => undefined), async (path, signal) => {
    await receiver.until(() => attemptsOf(path).length >= 2, ATTEMPT_TIMEOUT_MS + o.waitMs, signal);
  });
  add('timeout.10s', 'delivery rules', 'a held answer is cut by the sender at 10 s (connection closed) and the delivery is tried again', [TIMEOUT_RULE], async () => {
    if (o.skipSlow) return skip('--skip-slow: this check holds an answer for 10 s');
    const { path, evidence } = await slow();
    const attempts = attemptsOf(path);
    const shown = [...evidence, ...attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`))];
    const first = attempts[0];
    if (!first) return fail(`no delivery arrived within ${o.waitMs / 1000} s of creating an order`, TIMEOUT_RULE, shown);
    if (first.closedMono === undefined) {
      return fail(`the sender did not close the held connection within ${(ATTEMPT_TIMEOUT_MS + o.waitMs) / 1000} s`, TIMEOUT_RULE, shown);
    }
    const cutAfter = first.closedMono - first.receivedMono;
    if (cutAfter < CUT_EARLIEST_MS) return fail(`the sender gave up after ${(cutAfter / 1000).toFixed(1)} s, before the contract's 10 s`, TIMEOUT_RULE, shown);
    if (cutAfter > CUT_LATEST_MS) return fail(`the sender held the connection for ${(cutAfter / 1000).toFixed(1)} s, beyond the 10 s timeout`, TIMEOUT_RULE, shown);
    if (attempts.length < 2) return fail(`the timed-out attempt was not tried again within ${o.waitMs / 1000} s`, TIMEOUT_RULE, shown);
    return pass([`cut after ${(cutAfter / 1000).toFixed(2)} s; next attempt ${Math.round(attempts[1]!.receivedMono - first.closedMono)} ms later`]);
  });

  add('timeout.fresh-timestamp', 'delivery rules', "the attempt after a timeout is signed anew: its t is later than the timed-out attempt's", [FRESH_T_RULE], async () => {
    if (o.skipSlow) return skip('--skip-slow: needs the held answer of the timeout check');
    const { path } = await slow();
    const attempts = attemptsOf(path);
    if (attempts.length < 2) return fail(`no attempt followed the timed-out one within ${o.waitMs / 1000} s (see ${TARGET}.timeout.10s)`, FRESH_T_RULE, attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`)));
    const stale = staleTimestamp(attempts[0]!, attempts[1]!, failureKnownMono(attempts[0]!));
    if (stale) return fail(`attempt 2: ${stale}`, FRESH_T_RULE, attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`)));
    return pass();
  });

  // ---- at most ten attempts ---------------------------------------------------------------------
  const tenAttempts = scenario('always-500', answer(500), async (path, signal) => {
    const done = await receiver.until(() => attemptsOf(path).length >= MAX_DELIVERY_ATTEMPTS, o.attemptsWindowMs, signal);
    if (!done) return;
    // After the tenth: watch at least twice the longest gap so far for an eleventh.
    const times = attemptsOf(path).map((r) => r.receivedMono);
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? t));
    const grace = Math.max(5_000, 2 * Math.max(0, ...gaps));
    await receiver.until(() => attemptsOf(path).length > MAX_DELIVERY_ATTEMPTS, grace, signal);
  });
  add('attempts.at-most-ten', 'delivery rules', 'a delivery answered 500 every time gets at most ten attempts', [TEN_ATTEMPTS_RULE], async () => {
    const { path, evidence } = await tenAttempts();
    const attempts = attemptsOf(path);
    const shown = [...evidence, ...attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`))];
    if (attempts.length > MAX_DELIVERY_ATTEMPTS) return fail(`${attempts.length} attempts of one event arrived; the contract allows ten per cycle`, TEN_ATTEMPTS_RULE, shown);
    if (attempts.length === 0) return fail(`no delivery arrived within ${o.waitMs / 1000} s of creating an order`, TEN_ATTEMPTS_RULE, shown);
    if (attempts.length < MAX_DELIVERY_ATTEMPTS) return pass([`${attempts.length} attempts, none beyond ten (whether ten arrive is ${TARGET}.attempts.exactly-ten)`]);
    const gaps = attempts.slice(1).map((r, i) => Math.round(r.receivedMono - attempts[i]!.receivedMono));
    return pass([`ten attempts, gaps ${gaps.join(', ')} ms; no eleventh`]);
  });

  add('attempts.exactly-ten', 'delivery rules', 'a delivery answered 500 every time gets exactly ten attempts: fewer fail the rule', [TEN_ATTEMPTS_RULE], async () => {
    const { path, evidence } = await tenAttempts();
    const attempts = attemptsOf(path);
    const shown = [...evidence, ...attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`))];
    if (attempts.length === MAX_DELIVERY_ATTEMPTS) return pass();
    if (attempts.length > MAX_DELIVERY_ATTEMPTS) return fail(`${attempts.length} attempts of one event arrived; a cycle is ten`, TEN_ATTEMPTS_RULE, shown);
    if (attempts.length === 0) return fail(`no delivery arrived within ${o.waitMs / 1000} s of creating an order`, TEN_ATTEMPTS_RULE, shown);
    const state = await session.findDelivery(eventIdOf(attempts[0]!) ?? '', evidence, new AbortController().signal).then((d) => d.state, () => 'unknown');
    return fail(
      `only ${attempts.length} attempts of one event arrived within the ${o.attemptsWindowMs / 1000} s window (the delivery reads ${state}); a cycle is exactly ten attempts. ` +
        "The window must cover the implementation's retry schedule: give a longer --attempts-window-ms or run it with a scaled schedule (conformance/README.md, Exit codes)",
      TEN_ATTEMPTS_RULE,
      shown,
    );
  });

  // ---- a manual retry of the failed delivery: the original event id and payload --------------------
  const manualPath = session.path('manual-retry');
  receiver.route(manualPath, answer(200));
  type ManualRetry = { early: CheckOutcome } | { first: Received; last: Received; got: Received[]; requestedMono: number; shown: Exchange[]; eventId: string };
  const manualRetry = (): Promise<ManualRetry> =>
    once('manual-retry', async () => {
      const { path } = await tenAttempts();
      const attempts = attemptsOf(path);
      if (attempts.length < MAX_DELIVERY_ATTEMPTS) {
        return { early: fail(`needs a failed delivery (ten unsuccessful attempts); only ${attempts.length} arrived within --attempts-window-ms (see ${TARGET}.attempts.exactly-ten)`, MANUAL_RETRY_RULE, attempts.map((r, i) => asExchange(r, `attempt ${i + 1}`))) };
      }
      const first = attempts[0]!;
      const last = attempts[attempts.length - 1]!;
      const eventId = eventIdOf(first) ?? '';
      const evidence: Exchange[] = [];
      const signal = new AbortController().signal;
      let delivery = await session.findDelivery(eventId, evidence, signal);
      for (let i = 0; delivery.state !== 'failed' && i < Math.ceil(o.waitMs / 500); i++) {
        await SuiteReceiver.sleep(500, signal);
        delivery = await session.findDelivery(eventId, [], signal);
      }
      if (delivery.state !== 'failed') return { early: fail(`after ten unsuccessful attempts the delivery of ${eventId} reads ${delivery.state}, not failed`, TEN_ATTEMPTS_RULE, evidence) };
      await session.pointTo('manual-retry', evidence, signal);
      // The manual retry cannot be signed before it is asked for.
      const requestedMono = performance.now();
      await session.retryDelivery(delivery.id, evidence, signal);
      await receiver.until(() => receiver.at(manualPath).length > 0, o.waitMs, signal);
      const got = receiver.at(manualPath);
      const shown = [...evidence, asExchange(first, 'attempt 1 of the first cycle'), asExchange(last, `attempt ${attempts.length} of the first cycle`), ...got.map((r, i) => asExchange(r, `after the manual retry ${i + 1}`))];
      return { first, last, got, requestedMono, shown, eventId };
    });
  add('retry.manual-same-event', 'delivery rules', 'Retry webhook of the failed delivery sends the original event id and payload to the current endpoint', [MANUAL_RETRY_RULE], async () => {
    const m = await manualRetry();
    if ('early' in m) return m.early;
    const { first, got, shown, eventId } = m;
    if (got.length === 0) return fail(`the retried delivery did not arrive at the endpoint's current URL within ${o.waitMs / 1000} s`, MANUAL_RETRY_RULE, shown);
    const again = got[0]!;
    if (eventIdOf(again) !== eventId) return fail(`the manual retry carries Service-Event-Id ${eventIdOf(again)}, not the original ${eventId}`, MANUAL_RETRY_RULE, shown);
    if (!again.body.equals(first.body)) return fail('the manual retry carries another payload than the original delivery', MANUAL_RETRY_RULE, shown);
    const problems = signatureProblems(again, (await endpoint()).secret);
    if (problems.length > 0) return fail(`the manual retry: ${problems.join('; ')}`, SIGNATURE_RULE, shown);
    return pass();
  });
  add('retry.manual-fresh-timestamp', 'delivery rules', "the manual retry is signed anew: its t is later than the first cycle's last attempt", [FRESH_T_RULE], async () => {
    // A step of the shared scenario that failed is reported once, by retry.manual-same-event.
    const m = await manualRetry().catch((err: unknown) => {
      if (err instanceof StepFailed) return null;
      throw err;
    });
    if (m === null || 'early' in m || m.got.length === 0) return fail(`the manual retry did not arrive (see ${TARGET}.retry.manual-same-event)`, FRESH_T_RULE, m !== null && !('early' in m) ? m.shown : []);
    const stale = staleTimestamp(m.last, m.got[0]!, m.requestedMono);
    if (stale) return fail(`the manual retry: ${stale}`, FRESH_T_RULE, m.shown);
    return pass();
  });

  // ---- a URL edit: the pending delivery of the old version goes nowhere -----------------------------
  const oldPath = session.path('version-old');
  const newPath = session.path('version-new');
  // Each attempt at the old URL is held a moment, then refused: the edit lands while the first is in flight.
  receiver.route(oldPath, answerAfter(1_500, 500));
  receiver.route(newPath, answer(200));
  add('version.url-edit', 'delivery rules', "after a URL edit, the old version's pending delivery is neither retried nor sent to the new URL; new events go to the new URL", [VERSION_RULE], async () => {
    await endpoint();
    const evidence: Exchange[] = [];
    const signal = new AbortController().signal;
    await session.pointTo('version-old', evidence, signal);
    await session.createOrder(evidence, signal);
    if (!(await receiver.until(() => receiver.at(oldPath).length > 0, o.waitMs, signal))) {
      return fail(`no delivery arrived within ${o.waitMs / 1000} s of creating an order`, VERSION_RULE, evidence);
    }
    const oldEvent = eventIdOf(receiver.at(oldPath)[0]!);
    await session.pointTo('version-new', evidence, signal);
    const seenAtEdit = receiver.at(oldPath).length;
    // Let the held attempt be refused first: the old delivery is then pending a retry while the
    // new version receives its first event.
    await SuiteReceiver.sleep(2_000, signal);
    const next = await session.createOrder(evidence, signal);
    await receiver.until(() => receiver.at(newPath).some((r) => (parseBody(r) as { data?: { orderId?: unknown } } | undefined)?.data?.orderId === next.orderId), o.waitMs, signal);
    await SuiteReceiver.sleep(o.quietMs, signal);
    const shown = [...evidence, ...receiver.at(oldPath).map((r, i) => asExchange(r, `old URL ${i + 1}`)), ...receiver.at(newPath).map((r, i) => asExchange(r, `new URL ${i + 1}`))];
    // Under any event id: the old order's event re-sent with a new id is the old delivery too.
    const oldOrder = (parseBody(receiver.at(oldPath)[0]!) as { data?: { orderId?: unknown } } | undefined)?.data?.orderId;
    const leaked = receiver.at(newPath).filter((r) => eventIdOf(r) === oldEvent || (parseBody(r) as { data?: { orderId?: unknown } } | undefined)?.data?.orderId === oldOrder);
    if (leaked.length > 0) {
      const ids = [...new Set(leaked.map(eventIdOf))].join(', ');
      return fail(`the old version's delivery (event ${oldEvent}, order ${String(oldOrder)}) was sent to the new URL ${leaked.length} time(s), as event ${ids}`, VERSION_RULE, shown);
    }
    const later = receiver.at(oldPath).length - seenAtEdit;
    if (later > 0) return fail(`the old version's delivery was tried ${later} more time(s) at the old URL after the edit; it must become disabled`, VERSION_RULE, shown);
    if (!receiver.at(newPath).some((r) => (parseBody(r) as { data?: { orderId?: unknown } } | undefined)?.data?.orderId === next.orderId)) {
      return fail(`an event created after the edit did not arrive at the new URL within ${o.waitMs / 1000} s`, VERSION_RULE, shown);
    }
    return pass([`the old event ${oldEvent} arrived ${seenAtEdit} time(s) before the edit and never after`]);
  });

  // ---- a surplus after paid: no further webhook --------------------------------------------------
  const surplusPath = session.path('surplus');
  receiver.route(surplusPath, answer(200));
  add('surplus.no-webhook', 'delivery rules', 'a surplus deposit after order.paid updates the order without another webhook', [SURPLUS_RULE], async () => {
    await endpoint();
    const evidence: Exchange[] = [];
    const signal = new AbortController().signal;
    await session.pointTo('surplus', evidence, signal);
    const order = await session.createOrder(evidence, signal);
    await session.payOrder(order, evidence, signal);
    const ofOrder = (): Received[] => receiver.at(surplusPath).filter((r) => (parseBody(r) as { data?: { orderId?: unknown } } | undefined)?.data?.orderId === order.orderId);
    const typeOf = (r: Received): unknown => (parseBody(r) as { type?: unknown } | undefined)?.type;
    if (!(await receiver.until(() => ofOrder().some((r) => typeOf(r) === 'order.paid'), o.waitMs, signal))) {
      return fail(`no order.paid delivery arrived within ${o.waitMs / 1000} s of paying the order`, SURPLUS_RULE, evidence);
    }
    const before = ofOrder().length;
    await session.deposit(order.orderId, '1', evidence, signal);
    await SuiteReceiver.sleep(o.quietMs, signal);
    // Any request after the deposit counts, under a new event id or an old one.
    const extra = ofOrder().slice(before);
    if (extra.length > 0) {
      return fail(`after the surplus deposit ${extra.length} more webhook(s) arrived for the paid order (${extra.map((r) => `${String(typeOf(r))} ${eventIdOf(r) ?? ''}`).join(', ')})`, SURPLUS_RULE, [...evidence, ...extra.map((r) => asExchange(r, 'unexpected delivery'))]);
    }
    return pass();
  });

  // ---- the scheme's header sets on every delivery so far (scheme.ts) ------------------------------
  const callbackPaths = [session.path('callback'), session.path('callback-rotation')];
  schemeChecks({ add, receiver, endpoint, ofEndpoint: (r) => !callbackPaths.some((p) => r.url.split('?')[0]!.startsWith(p)) });

  // ---- any 2xx is a success (success.ts) -----------------------------------------------------------
  successChecks({ add, session, receiver, endpoint, waitMs: o.waitMs, quietMs: o.quietMs });

  // ---- a receiver's Retry-After (retry-after.ts) ---------------------------------------------------
  retryAfterChecks({ add, session, receiver, endpoint, waitMs: o.waitMs });

  // ---- recovery by time range (recover.ts) ---------------------------------------------------------
  recoverChecks({ add, session, receiver, endpoint, waitMs: o.waitMs, quietMs: o.quietMs });
  recoverAfterChangeChecks({ add, session, receiver, endpoint, waitMs: o.waitMs, quietMs: o.quietMs });

  // ---- several endpoints, each with its event types (fan-out.ts) -----------------------------------
  fanOutChecks({ add, session, receiver, endpoint, waitMs: o.waitMs, quietMs: o.quietMs });
  healthChecks({ add, session, receiver, endpoint, waitMs: o.waitMs, quietMs: o.quietMs });

  // ---- a delivery pending a retry at each kind of endpoint change (pending-change.ts) ----------------
  pendingChangeChecks({ add, session, receiver, endpoint, waitMs: o.waitMs, quietMs: o.quietMs, attemptsWindowMs: o.attemptsWindowMs });

  // ---- recovery paced, and per endpoint (recover-paced.ts) ----------------------------------------
  recoverPacedChecks({ add, session, receiver, endpoint, waitMs: o.waitMs, quietMs: o.quietMs });

  // ---- a secret rotation: new events signed with the new secret -----------------------------------
  rotationChecks({ add, session, receiver, endpoint, waitMs: o.waitMs, ...(o.callbackSecret ? { callbackSecret: o.callbackSecret } : {}) });

  // ---- nothing after the endpoint is disabled -----------------------------------------------------
  receiver.route(session.path('disabled'), answer(200));
  add('disabled.no-delivery', 'delivery rules', 'after the endpoint is disabled, an event produces no delivery', [DISABLED_RULE], async () => {
    await endpoint();
    const evidence: Exchange[] = [];
    const signal = new AbortController().signal;
    await session.pointTo('disabled', evidence, signal);
    await session.disable(evidence, signal);
    await session.createOrder(evidence, signal);
    await SuiteReceiver.sleep(o.quietMs, signal);
    const got = receiver.at(session.path('disabled'));
    if (got.length > 0) {
      return fail(`${got.length} request(s) reached the disabled endpoint's URL within ${o.quietMs / 1000} s`, DISABLED_RULE, [...evidence, ...got.map((r) => asExchange(r, 'unexpected delivery'))]);
    }
    return pass([`nothing arrived within ${o.quietMs / 1000} s; the endpoint is left disabled`]);
  });

  return checks;
}

/** The first delivery (the caller made sure there is one). */
function present(seen: Observed): Received {
  if (seen.unavailable) throw seen.unavailable;
  const first = seen.deliveries[0];
  if (!first) throw new StepFailed('no delivery arrived', seen.evidence);
  return first;
}

/** Passes when `problems` finds nothing in every delivery; fails on the first that has some. */
function every(deliveries: Received[], problems: (r: Received) => string[], rule: SpecRule): CheckOutcome {
  for (const [i, r] of deliveries.entries()) {
    const found = problems(r);
    if (found.length > 0) {
      return fail(`delivery ${i + 1} of ${deliveries.length}: ${found.join('; ')}`, rule, [asExchange(r, `delivery ${i + 1}`)]);
    }
  }
  return pass(deliveries.length > 1 ? [`${deliveries.length} deliveries checked`] : []);
}
