// Recovery by time range (POST /v2/webhooks/endpoints/{endpointId}/recover), judged by what
// reaches the suite's receiver. Four orders are created one after another, each delivered
// (answered 200) before the next: `before`, `first`, `second`, `after`. The window is
// [createdAt of first, createdAt of after), as the activity shows them, so it holds exactly
// first and second. It is recovered twice with `include` `all` (delivered ones too: no need
// to fail deliveries for good, which takes the whole retry schedule), then once with
// `include` left out (`failed`: nothing in the window failed), each request once the previous
// re-deliveries are delivered again (a pending one is left alone):
//   recover.window      each delivery of the window arrives again once per include-all
//                       request, nothing else does (before, after, nor any earlier event of
//                       the endpoint), and the failed-only request recovers none
//   recover.same-event  each re-delivery carries the original event id and body bytes and is
//                       signed validly
import type { Exchange } from '../core/check.ts';
import { fail, pass } from '../core/outcome.ts';
import { SuiteReceiver, answer } from './receiver.ts';
import type { Received } from './receiver.ts';
import { RECOVER_RULE, SIGNATURE_RULE } from './rules.ts';
import type { SuccessOptions } from './success.ts';
import { StepFailed } from './session.ts';
import type { DeliveryRef, RecoverRequest, Recovery, SenderSession } from './session.ts';
import { asExchange, eventIdOf, parseBody, signatureProblems } from './verify.ts';

/** What the success checks take: the check adder, the session, the receiver and the waits. */
export type RecoverOptions = SuccessOptions;

/** How many recover requests the scenario sends over the same window. */
export const RECOVER_REQUESTS = 2;
const ROLES = ['before', 'first', 'second', 'after'] as const;
type Role = (typeof ROLES)[number];
const INSIDE: readonly Role[] = ['first', 'second'];
const POLL_MS = 250;

interface Original {
  eventId: string;
  delivery: Received;
  ref: DeliveryRef;
}

interface Recovered {
  originals: Record<Role, Original>;
  window: RecoverRequest;
  answers: Recovery[];
  /** The answer to the last request, `include` left out (failed only). */
  failedAnswer: Recovery;
  /** Everything that reached the path after the first recover request. */
  again: Received[];
  shown: Exchange[];
}

/** Polls the activity until the delivery of `eventId` reads delivered (a pending one is not recovered). */
export async function waitDelivered(session: SenderSession, eventId: string, waitMs: number, evidence: Exchange[], signal: AbortSignal): Promise<DeliveryRef> {
  let ref = await session.findDelivery(eventId, evidence, signal);
  for (let i = 0; ref.state !== 'delivered' && i < Math.ceil(waitMs / POLL_MS); i++) {
    await SuiteReceiver.sleep(POLL_MS, signal);
    ref = await session.findDelivery(eventId, [], signal);
  }
  if (ref.state !== 'delivered') throw new StepFailed(`the delivery of ${eventId} was answered 200 but reads ${ref.state}, not delivered, within ${waitMs / 1000} s`, evidence);
  return ref;
}

export function recoverChecks(o: RecoverOptions): void {
  const { add, session, receiver } = o;
  const path = session.path('recover');
  receiver.route(path, answer(200));
  let memo: Promise<Recovered> | null = null;
  const within = `within ${o.waitMs / 1000} s`;

  const delivered = (eventId: string, evidence: Exchange[], signal: AbortSignal): Promise<DeliveryRef> => waitDelivered(session, eventId, o.waitMs, evidence, signal);

  const originalOf = async (role: Role, evidence: Exchange[], signal: AbortSignal): Promise<Original> => {
    const { orderId } = await session.createOrder(evidence, signal);
    const ofOrder = (): Received | undefined => receiver.at(path).find((r) => (parseBody(r) as { data?: { orderId?: unknown } } | undefined)?.data?.orderId === orderId);
    if (!(await receiver.until(() => ofOrder() !== undefined, o.waitMs, signal))) throw new StepFailed(`the ${role} order's delivery did not arrive ${within} of creating it`, evidence);
    const delivery = ofOrder()!;
    const eventId = eventIdOf(delivery) ?? '';
    return { eventId, delivery, ref: await delivered(eventId, evidence, signal) };
  };

  const scenario = (): Promise<Recovered> =>
    (memo ??= (async () => {
      await o.endpoint();
      const evidence: Exchange[] = [];
      const signal = new AbortController().signal;
      await session.pointTo('recover', evidence, signal);
      const originals = {} as Record<Role, Original>;
      for (const role of ROLES) originals[role] = await originalOf(role, evidence, signal);
      const times = ROLES.map((r) => Date.parse(originals[r].ref.createdAt));
      if (times.some((t, i) => i > 0 && !(t > times[i - 1]!))) {
        throw new StepFailed(`the four deliveries, created one after another, are listed with createdAt ${ROLES.map((r) => originals[r].ref.createdAt).join(', ')}: not increasing`, evidence);
      }
      const window: RecoverRequest = { since: originals.first.ref.createdAt, until: originals.after.ref.createdAt, include: 'all' };
      const seen = receiver.at(path).length;
      const answers: Recovery[] = [];
      for (let n = 1; n <= RECOVER_REQUESTS; n++) {
        answers.push(await session.recover(window, evidence, signal));
        const arrived = (): boolean => INSIDE.every((role) => receiver.at(path).slice(seen).filter((r) => eventIdOf(r) === originals[role].eventId).length >= n);
        await receiver.until(arrived, o.waitMs, signal);
        // The next request finds them delivered again, not pending (a pending one is left alone).
        for (const role of INSIDE) await delivered(originals[role].eventId, evidence, signal);
      }
      // `include` left out is `failed`: none of the window's deliveries failed, none goes again.
      const { include: _all, ...failedOnly } = window;
      const failedAnswer = await session.recover(failedOnly, evidence, signal);
      await SuiteReceiver.sleep(o.quietMs, signal);
      const again = receiver.at(path).slice(seen);
      const shown = [
        ...evidence,
        ...ROLES.map((role) => asExchange(originals[role].delivery, `${role}: the original delivery (createdAt ${originals[role].ref.createdAt})`)),
        ...again.map((r, i) => asExchange(r, `after the recover requests ${i + 1}`)),
      ];
      return { originals, window, answers, failedAnswer, again, shown };
    })());

  add('recover.window', 'delivery rules', `recover over [since, until) sends each delivery created in it again, once per request (${RECOVER_REQUESTS} requests with include all), none outside it, and none that did not fail when include is left out`, [RECOVER_RULE], async () => {
    const { originals, window, answers, failedAnswer, again, shown } = await scenario();
    const inside = new Set(INSIDE.map((role) => originals[role].eventId));
    const outside = again.filter((r) => !inside.has(eventIdOf(r) ?? ''));
    if (outside.length > 0) {
      const ids = new Set(outside.map((r) => eventIdOf(r) ?? '(no id)'));
      const named = ROLES.filter((role) => ids.has(originals[role].eventId));
      const earlier = ids.size - named.length;
      const which = [...named.map((role) => `the ${role} order's`), ...(earlier > 0 ? [`${earlier} earlier event(s) of the endpoint`] : [])].join(', ');
      return fail(`${outside.length} request(s) re-sent deliveries created outside [${window.since}, ${window.until}): ${which}`, RECOVER_RULE, shown);
    }
    for (const role of INSIDE) {
      const times = again.filter((r) => eventIdOf(r) === originals[role].eventId).length;
      if (times !== RECOVER_REQUESTS) {
        return fail(`the ${role} delivery of the window (event ${originals[role].eventId}) arrived ${times} time(s) after ${RECOVER_REQUESTS} recover requests with include all and one without include (failed only); once per include-all request is ${RECOVER_REQUESTS}`, RECOVER_RULE, shown);
      }
    }
    const counts = answers.map((a) => a.recovered);
    if (counts.some((c) => c !== INSIDE.length)) return fail(`the recover requests with include all answered recovered ${counts.join(', ')}; the window holds ${INSIDE.length} deliveries`, RECOVER_RULE, shown);
    if (failedAnswer.recovered !== 0) return fail(`the recover request without include (failed only) answered recovered ${failedAnswer.recovered}; none of the window's deliveries failed`, RECOVER_RULE, shown);
    return pass([`the window's ${INSIDE.length} deliveries arrived once per include-all request and not for the failed-only one; the deliveries just before since and at until did not`]);
  });

  add('recover.same-event', 'delivery rules', 'each recovered delivery carries the original event id and body bytes and is signed validly', [RECOVER_RULE, SIGNATURE_RULE], async () => {
    const { originals, again, shown } = await scenario();
    const secret = (await o.endpoint()).secret;
    const byBody = INSIDE.map((role) => originals[role]);
    for (const [i, r] of again.entries()) {
      const original = byBody.find((x) => x.eventId === eventIdOf(r)) ?? byBody.find((x) => x.delivery.body.equals(r.body));
      if (!original) continue; // another event: recover.window reports it
      if (eventIdOf(r) !== original.eventId) return fail(`re-delivery ${i + 1} carries the body of event ${original.eventId} under Service-Event-Id ${eventIdOf(r) ?? '(none)'}`, RECOVER_RULE, shown);
      if (!r.body.equals(original.delivery.body)) return fail(`re-delivery ${i + 1} of event ${original.eventId} carries another body than the original delivery`, RECOVER_RULE, shown);
      const problems = signatureProblems(r, secret);
      if (problems.length > 0) return fail(`re-delivery ${i + 1} of event ${original.eventId}: ${problems.join('; ')}`, SIGNATURE_RULE, shown);
    }
    if (again.length === 0) return fail(`nothing arrived ${within} of the recover requests (see recover.window)`, RECOVER_RULE, shown);
    return pass();
  });
}
