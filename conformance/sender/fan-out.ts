// Several endpoints per environment, each subscribed to event types (issue 68), from the
// sender's side. One scenario, judged by three checks: beside the session's endpoint (every
// type), an endpoint for order.paid, one for order.payment_review_required and one disabled;
// an order is created and paid.
//   fan-out.by-type            order.paid reaches the order.paid endpoint and the session's;
//                              order.created only the session's; the review endpoint nothing
//   fan-out.own-secret         each endpoint's request verifies with its own secret, not another's
//   fan-out.disabled-beside    the disabled endpoint gets nothing while the others do
//   fan-out.test-own-endpoint  the test webhook sent from the order.paid endpoint and the one
//                              from the review endpoint (whose eventTypes leave it out) each
//                              reach their own endpoint, and no other endpoint gets a test
// And a second scenario:
//   fan-out.version-per-endpoint  two endpoints refuse an order.created (500, so it stays
//                              pending); a URL edit of one leaves the other's delivery pending:
//                              it is tried again, and the edited one's is not
// The watch for strays at an endpoint ends at a later marker (a test webhook sent from it once
// the others have their deliveries); the disabled endpoint, which takes no test, is watched for
// the quiet period. Every endpoint the scenarios add is disabled at their end.
import type { Exchange } from '../core/check.ts';
import { fail, pass } from '../core/outcome.ts';
import { answer } from './receiver.ts';
import type { Received } from './receiver.ts';
import type { SenderRule } from './rules.ts';
import type { SuccessOptions } from './success.ts';
import { asExchange, eventIdOf, parseBody, signatureProblems } from './verify.ts';
import { MANAGEMENT_API } from '../core/coverage.ts';

export const FAN_OUT_RULE: SenderRule = {
  covers: ['management#fan-out-per-endpoint', 'createWebhookEndpoint#event-types-default-every'],
  source: `${MANAGEMENT_API}#/info/x-rules; POST /v2/webhooks/endpoints (eventTypes)`,
  quote: 'An event prepares one delivery per active endpoint whose types include it, and none for any other endpoint. eventTypes left out, the endpoint receives every type.',
};

export const OWN_SECRET_RULE: SenderRule = {
  covers: ['management#fan-out-own-secret'],
  source: `${MANAGEMENT_API}#/info/x-rules`,
  quote: "Each endpoint has its own signing secret: each delivery is signed with its endpoint's secret.",
};

export const DISABLED_BESIDE_RULE: SenderRule = {
  covers: ['management#disabled-beside-active'],
  source: `${MANAGEMENT_API}#/info/x-rules`,
  quote: 'A disabled endpoint receives nothing, while the active endpoints beside it receive their events.',
};

export const TEST_OWN_ENDPOINT_RULE: SenderRule = {
  covers: ['sendTestWebhook#own-endpoint'],
  source: `${MANAGEMENT_API}#/paths/~1v2~1webhooks~1endpoints~1{endpointId}~1test/post`,
  quote: 'The test goes to this endpoint only, whatever its eventTypes; the other endpoints of the environment get nothing.',
};

export const ENDPOINT_VERSIONS_RULE: SenderRule = {
  covers: ['management#version-per-endpoint'],
  source: `${MANAGEMENT_API}#/info/x-rules; PATCH /v2/webhooks/endpoints/{endpointId}`,
  quote: "That endpoint's pending deliveries of the older version become disabled. Other endpoints of the environment are not touched.",
};

type Body = { id?: unknown; type?: unknown; data?: { orderId?: unknown } };
const body = (r: Received): Body => (parseBody(r) as Body | undefined) ?? {};

interface Routed {
  evidence: Exchange[];
  orderId: string;
  secrets: { all: string; paid: string; review: string };
  at: { all: Received[]; paid: Received[]; review: Received[]; disabled: Received[] };
  /** The test webhooks each endpoint received during the scenario, and the event ids of the two sent. */
  tests: { all: Received[]; paid: Received[]; review: Received[]; disabled: Received[] };
  markers: { paid: string; review: string };
  /** Why the scenario ended early (the check fails with it); null when it ran to the end. */
  broken: string | null;
}

export function fanOutChecks(o: SuccessOptions): void {
  const { add, session, receiver } = o;
  const within = `within ${o.waitMs / 1000} s`;
  const paths = { all: session.path('fan-all'), paid: session.path('fan-paid'), review: session.path('fan-review'), disabled: session.path('fan-disabled') };
  for (const p of Object.values(paths)) receiver.route(p, answer(200));
  let routed: Promise<Routed> | null = null;

  const route = async (signal: AbortSignal): Promise<Routed> => {
    const { secret } = await o.endpoint();
    const evidence: Exchange[] = [];
    await session.pointTo('fan-all', evidence, signal);
    const paid = await session.addEndpoint('fan-paid', ['order.paid'], evidence, signal);
    const review = await session.addEndpoint('fan-review', ['order.payment_review_required'], evidence, signal);
    const disabled = await session.addEndpoint('fan-disabled', undefined, evidence, signal);
    const seenBefore = Object.fromEntries(Object.entries(paths).map(([k, p]) => [k, receiver.at(p).length])) as Record<keyof typeof paths, number>;
    const markers = { paid: '', review: '' };
    const result = (broken: string | null, orderId = ''): Routed => {
      const of = (p: string): Received[] => receiver.at(p).filter((r) => body(r).data?.orderId === orderId);
      const tests = (k: keyof typeof paths): Received[] => receiver.at(paths[k]).slice(seenBefore[k]).filter((r) => body(r).type === 'webhook.test');
      return {
        evidence,
        orderId,
        broken,
        secrets: { all: secret, paid: paid.secret, review: review.secret },
        at: { all: of(paths.all), paid: of(paths.paid), review: of(paths.review), disabled: of(paths.disabled) },
        tests: { all: tests('all'), paid: tests('paid'), review: tests('review'), disabled: tests('disabled') },
        markers,
      };
    };
    try {
      await session.changeEndpoint(disabled.id, { active: false }, 'disable the fan-disabled endpoint', evidence, signal);
      const order = await session.createOrder(evidence, signal);
      await session.payOrder(order, evidence, signal);
      const paidAt = (p: string): boolean => receiver.at(p).some((r) => body(r).type === 'order.paid' && body(r).data?.orderId === order.orderId);
      if (!(await receiver.until(() => paidAt(paths.all) && paidAt(paths.paid), o.waitMs, signal))) return result(`order.paid did not reach both the every-type endpoint and the order.paid endpoint ${within}`, order.orderId);
      // Later markers: a test webhook from each typed endpoint, sent once the others have theirs.
      markers.paid = await session.sendTest(evidence, signal, paid.id);
      markers.review = await session.sendTest(evidence, signal, review.id);
      const marked = (p: string, id: string): boolean => receiver.at(p).some((r) => eventIdOf(r) === id);
      await receiver.until(() => marked(paths.paid, markers.paid) && marked(paths.review, markers.review), o.waitMs, signal);
      await receiver.until(() => false, o.quietMs, signal);
      return result(null, order.orderId);
    } finally {
      for (const e of [paid, review]) await session.changeEndpoint(e.id, { active: false }, 'disable an endpoint the scenario added', evidence, signal);
    }
  };
  const routedOnce = (signal: AbortSignal): Promise<Routed> => (routed ??= route(signal));
  const shown = (r: Routed): Exchange[] => [
    ...r.evidence,
    ...Object.entries(r.at).flatMap(([name, list]) => list.map((x, i) => asExchange(x, `${name} endpoint ${i + 1}: ${String(body(x).type)}`))),
  ];

  add('fan-out.by-type', 'delivery rules', 'order.paid goes to the endpoints whose eventTypes include it (and every-type ones), order.created not to an order.paid endpoint, nothing to a review-only endpoint', [FAN_OUT_RULE], async ({ signal }) => {
    const r = await routedOnce(signal);
    if (r.broken) return fail(r.broken, FAN_OUT_RULE, shown(r));
    const types = (list: Received[]): string[] => [...new Set(list.map((x) => String(body(x).type)))].sort();
    if (types(r.at.all).join() !== 'order.created,order.paid') return fail(`the every-type endpoint got ${types(r.at.all).join(', ') || 'nothing'} of the order; it receives order.created and order.paid`, FAN_OUT_RULE, shown(r));
    if (types(r.at.paid).join() !== 'order.paid') return fail(`the order.paid endpoint got ${types(r.at.paid).join(', ')} of the order; it receives order.paid only`, FAN_OUT_RULE, shown(r));
    if (r.at.review.length > 0) return fail(`the order.payment_review_required endpoint got ${types(r.at.review).join(', ')} of the order; it receives none of its events`, FAN_OUT_RULE, shown(r));
    return pass([`order ${r.orderId}: every-type endpoint ${types(r.at.all).join(', ')}; order.paid endpoint order.paid; review endpoint nothing (until its test webhook)`]);
  });

  add('fan-out.own-secret', 'delivery rules', "each endpoint's deliveries of one event are signed with that endpoint's own secret, never with another endpoint's", [OWN_SECRET_RULE], async ({ signal }) => {
    const r = await routedOnce(signal);
    if (r.broken) return fail(r.broken, OWN_SECRET_RULE, shown(r));
    const judged: Array<[string, Received[], string, string]> = [
      ['order.paid endpoint', r.at.paid, r.secrets.paid, r.secrets.all],
      ['every-type endpoint', r.at.all, r.secrets.all, r.secrets.paid],
    ];
    for (const [name, list, own, other] of judged) {
      for (const x of list) {
        const problems = signatureProblems(x, own);
        if (problems.length === 0) continue;
        const withOther = signatureProblems(x, other).length === 0;
        return fail(`the ${name}'s ${String(body(x).type)} ${withOther ? "is signed with another endpoint's secret" : `does not verify with its secret: ${problems.join('; ')}`}`, OWN_SECRET_RULE, shown(r));
      }
    }
    return pass([`${r.at.paid.length + r.at.all.length} deliveries verified, each with its own endpoint's secret`]);
  });

  add('fan-out.disabled-beside', 'delivery rules', 'a disabled endpoint beside active ones gets nothing of an event they receive', [DISABLED_BESIDE_RULE], async ({ signal }) => {
    const r = await routedOnce(signal);
    if (r.broken) return fail(r.broken, DISABLED_BESIDE_RULE, shown(r));
    if (r.at.disabled.length > 0) return fail(`${r.at.disabled.length} request(s) of the order reached the disabled endpoint while the active ones received it`, DISABLED_BESIDE_RULE, shown(r));
    return pass([`nothing of order ${r.orderId} reached the disabled endpoint within ${o.quietMs / 1000} s after the others had it`]);
  });

  add('fan-out.test-own-endpoint', 'delivery rules', "a test webhook goes to the endpoint it is sent from only, whatever its eventTypes: the other endpoints get none", [TEST_OWN_ENDPOINT_RULE], async ({ signal }) => {
    const r = await routedOnce(signal);
    if (r.broken) return fail(r.broken, TEST_OWN_ENDPOINT_RULE, shown(r));
    const tests = Object.entries(r.tests).flatMap(([name, list]) => list.map((x, i) => asExchange(x, `${name} endpoint, test webhook ${i + 1}`)));
    const own = { paid: r.markers.paid, review: r.markers.review, all: '', disabled: '' } as const;
    for (const [name, list] of Object.entries(r.tests) as Array<[keyof typeof own, Received[]]>) {
      const other = list.filter((x) => eventIdOf(x) !== own[name]);
      if (other.length > 0) return fail(`the ${name} endpoint got ${other.length} test webhook(s) sent from another endpoint (event ${other.map(eventIdOf).join(', ')})`, TEST_OWN_ENDPOINT_RULE, [...r.evidence, ...tests]);
    }
    for (const name of ['paid', 'review'] as const) {
      if (!r.tests[name].some((x) => eventIdOf(x) === own[name])) return fail(`the test webhook sent from the ${name} endpoint did not reach it ${within}${name === 'review' ? ' (its eventTypes leave webhook.test out: a test goes whatever they are)' : ''}`, TEST_OWN_ENDPOINT_RULE, [...r.evidence, ...tests]);
    }
    return pass([`each test reached its own endpoint; the others got none within ${o.quietMs / 1000} s after they arrived`]);
  });

  const refusing = { edited: session.path('fan-edited'), sibling: session.path('fan-sibling'), moved: session.path('fan-moved') };
  receiver.route(refusing.edited, answer(500));
  receiver.route(refusing.sibling, answer(500));
  receiver.route(refusing.moved, answer(200));
  add('fan-out.version-per-endpoint', 'delivery rules', "a URL edit of one endpoint disables its own pending delivery only: another endpoint's pending delivery of the same event is tried again", [ENDPOINT_VERSIONS_RULE], async ({ signal }) => {
    await o.endpoint();
    const evidence: Exchange[] = [];
    const edited = await session.addEndpoint('fan-edited', ['order.created'], evidence, signal);
    const sibling = await session.addEndpoint('fan-sibling', ['order.created'], evidence, signal);
    try {
      const { orderId } = await session.createOrder(evidence, signal);
      const of = (p: string): Received[] => receiver.at(p).filter((x) => body(x).data?.orderId === orderId);
      const seen = (): Exchange[] => [...evidence, ...Object.entries(refusing).flatMap(([name, p]) => of(p).map((x, i) => asExchange(x, `${name} ${i + 1}`)))];
      if (!(await receiver.until(() => of(refusing.edited).length > 0 && of(refusing.sibling).length > 0, o.waitMs, signal))) {
        return fail(`order.created did not reach both endpoints ${within}`, ENDPOINT_VERSIONS_RULE, seen());
      }
      await session.changeEndpoint(edited.id, { url: session.url('fan-moved') }, 'edit the URL of one endpoint', evidence, signal);
      const siblingAtEdit = of(refusing.sibling).length;
      const editedAtEdit = of(refusing.edited).length;
      // The sibling's next attempt is the marker: the edited endpoint's retries would have come by then.
      if (!(await receiver.until(() => of(refusing.sibling).length > siblingAtEdit + 1, o.waitMs, signal))) {
        return fail(`the other endpoint's pending delivery was not tried again ${within} of the URL edit: a change of one endpoint disables only that endpoint's pending deliveries`, ENDPOINT_VERSIONS_RULE, seen());
      }
      const leaked = of(refusing.moved);
      if (leaked.length > 0) return fail(`the edited endpoint's old pending delivery was sent to its new URL (${leaked.length} time(s))`, ENDPOINT_VERSIONS_RULE, seen());
      const later = of(refusing.edited).length - editedAtEdit;
      if (later > 1) return fail(`the edited endpoint's old delivery was tried ${later} more time(s) at its old URL after the edit (one may have been in flight)`, ENDPOINT_VERSIONS_RULE, seen());
      return pass([`the other endpoint's delivery was tried ${of(refusing.sibling).length - siblingAtEdit} more time(s) after the edit; the edited one's stopped`]);
    } finally {
      for (const e of [edited, sibling]) await session.changeEndpoint(e.id, { active: false }, 'disable an endpoint the scenario added', evidence, signal);
    }
  });
}
