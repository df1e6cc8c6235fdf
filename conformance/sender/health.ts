// Endpoint health (issue 69), from the sender's side. One scenario, judged by three checks: beside
// the session's endpoint, an alerting endpoint (webhook_endpoint.disabled and order.created), a
// gone one (order.created and webhook_endpoint.disabled) whose receiver answers 410 and one of
// every type (eventTypes left out); an order is created.
//   health.gone-disables    the gone endpoint gets that one attempt, is shown disabled with
//                           reason gone, and gets nothing of a later order the alerting one gets
//   health.disabled-event   the alerting endpoint receives webhook_endpoint.disabled about it,
//                           reason gone, verified with its own secret; the gone endpoint never
//                           receives an operational event about itself
//   health.operational-explicit  the endpoint of every type receives the orders and no
//                           webhook_endpoint.* event (its eventTypes name none)
// The watch for strays at the gone endpoint ends at a later marker: a second order, once the
// alerting endpoint has its order.created; at the every-type endpoint, once it has that order too.
// The endpoints the scenario added are disabled at the end.
import type { Exchange } from '../core/check.ts';
import { fail, pass } from '../core/outcome.ts';
import { MANAGEMENT_API } from '../core/coverage.ts';
import { answer, type Received } from './receiver.ts';
import type { SenderRule } from './rules.ts';
import type { SuccessOptions } from './success.ts';
import { asExchange, parseBody, signatureProblems } from './verify.ts';

export const GONE_RULE: SenderRule = {
  covers: ['management#disable-on-gone', 'management#disabled-stays-disabled'],
  source: `${MANAGEMENT_API}#/info/x-rules`,
  quote: 'An endpoint that answers 410 Gone is disabled after that one attempt (disabledReason gone). An endpoint the service disabled stays disabled: no later attempt is sent to it.',
};

export const DISABLED_EVENT_RULE: SenderRule = {
  covers: ['management#operational-disabled-gone', 'management#operational-not-to-subject'],
  source: `${MANAGEMENT_API}#/info/x-rules`,
  quote: "After a 410 Gone, the environment's other active endpoints that subscribe to webhook_endpoint.disabled receive it, with reason gone. An operational event is never sent to the endpoint it is about.",
};

export const OPERATIONAL_EXPLICIT_RULE: SenderRule = {
  covers: ['management#operational-explicit'],
  source: `${MANAGEMENT_API}#/info/x-rules`,
  quote: 'Operational events go only to active endpoints whose eventTypes name them (an endpoint of every type, eventTypes null, receives order events only).',
};

type Body = { type?: unknown; data?: { orderId?: unknown; endpointId?: unknown; reason?: unknown } };
const body = (r: Received): Body => (parseBody(r) as Body | undefined) ?? {};
const operational = (r: Received): boolean => String(body(r).type).startsWith('webhook_endpoint.');

interface Gone {
  evidence: Exchange[];
  goneId: string;
  alertSecret: string;
  /** Everything the gone endpoint and the alerting one received in the scenario. */
  at: { gone: Received[]; alerts: Received[]; every: Received[] };
  /** Whether the later order reached the every-type endpoint: what it received before is complete. */
  everyMarked: boolean;
  /** The gone endpoint as GET showed it once the event arrived. */
  state: { active?: unknown; disabledReason?: unknown } | null;
  broken: string | null;
}

export function healthChecks(o: SuccessOptions): void {
  const { add, session, receiver } = o;
  const within = `within ${o.waitMs / 1000} s`;
  const paths = { gone: session.path('health-gone'), alerts: session.path('health-alerts'), every: session.path('health-every') };
  receiver.route(paths.gone, answer(410));
  receiver.route(paths.alerts, answer(200));
  receiver.route(paths.every, answer(200));
  let scenario: Promise<Gone> | null = null;

  const run = async (signal: AbortSignal): Promise<Gone> => {
    await o.endpoint();
    const evidence: Exchange[] = [];
    const alert = await session.addEndpoint('health-alerts', ['webhook_endpoint.disabled', 'order.created'], evidence, signal);
    const gone = await session.addEndpoint('health-gone', ['order.created', 'webhook_endpoint.disabled'], evidence, signal);
    const every = await session.addEndpoint('health-every', undefined, evidence, signal);
    let everyMarked = false;
    const result = (broken: string | null, state: Gone['state'] = null): Gone => ({
      evidence,
      goneId: gone.id,
      alertSecret: alert.secret,
      at: { gone: receiver.at(paths.gone), alerts: receiver.at(paths.alerts), every: receiver.at(paths.every) },
      everyMarked,
      state,
      broken,
    });
    try {
      await session.createOrder(evidence, signal);
      const told = (): boolean => receiver.at(paths.alerts).some((r) => body(r).type === 'webhook_endpoint.disabled' && body(r).data?.endpointId === gone.id);
      if (!(await receiver.until(told, o.waitMs, signal))) return result(`the alerting endpoint received no webhook_endpoint.disabled about the endpoint that answered 410 ${within}`);
      const state = (await session.endpointState(gone.id, evidence, signal)) as Gone['state'];
      // The marker: a later order reaches the alerting endpoint; a sender still sending to the gone one would send it there too.
      const marker = await session.createOrder(evidence, signal);
      const marked = (): boolean => receiver.at(paths.alerts).some((r) => body(r).type === 'order.created' && body(r).data?.orderId === marker.orderId);
      if (!(await receiver.until(marked, o.waitMs, signal))) return result(`the later order.created did not reach the alerting endpoint ${within}`, state);
      const markedEvery = (): boolean => receiver.at(paths.every).some((r) => body(r).type === 'order.created' && body(r).data?.orderId === marker.orderId);
      everyMarked = await receiver.until(markedEvery, o.waitMs, signal);
      return result(null, state);
    } finally {
      await session.changeEndpoint(alert.id, { active: false }, 'disable the alerting endpoint the scenario added', evidence, signal);
      await session.changeEndpoint(every.id, { active: false }, 'disable the every-type endpoint the scenario added', evidence, signal);
    }
  };
  const once = (signal: AbortSignal): Promise<Gone> => (scenario ??= run(signal));
  const shown = (g: Gone): Exchange[] => [
    ...g.evidence,
    ...Object.entries(g.at).flatMap(([name, list]) => list.map((x, i) => asExchange(x, `${name} endpoint ${i + 1}: ${String(body(x).type)}`))),
  ];

  add('health.gone-disables', 'delivery rules', 'a receiver answering 410 gets that one attempt: its endpoint is disabled (reason gone) and gets nothing of a later event', [GONE_RULE], async ({ signal }) => {
    const g = await once(signal);
    if (g.broken) return fail(g.broken, GONE_RULE, shown(g));
    const orders = g.at.gone.filter((r) => !operational(r));
    if (orders.length !== 1) return fail(`the endpoint that answered 410 received ${orders.length} order requests; after its first 410 it is disabled and receives nothing more`, GONE_RULE, shown(g));
    if (g.state?.active !== false || g.state.disabledReason !== 'gone') {
      return fail(`after its 410 the endpoint shows active ${String(g.state?.active)}, disabledReason ${String(g.state?.disabledReason)}; expected false and gone`, GONE_RULE, shown(g));
    }
    return pass([`endpoint ${g.goneId}: one attempt answered 410, then disabled (reason gone); a later order reached the alerting endpoint and not it`]);
  });

  add('health.disabled-event', 'delivery rules', "webhook_endpoint.disabled, reason gone, reaches the environment's alerting endpoint signed with its secret, and never the endpoint it is about", [DISABLED_EVENT_RULE], async ({ signal }) => {
    const g = await once(signal);
    if (g.broken) return fail(g.broken, DISABLED_EVENT_RULE, shown(g));
    const about = g.at.gone.filter(operational);
    if (about.length > 0) return fail(`the endpoint that answered 410 received ${about.map((r) => String(body(r).type)).join(', ')} about itself; operational events go only to the other endpoints`, DISABLED_EVENT_RULE, shown(g));
    const event = g.at.alerts.find((r) => body(r).type === 'webhook_endpoint.disabled' && body(r).data?.endpointId === g.goneId)!;
    const problems = signatureProblems(event, g.alertSecret);
    if (problems.length > 0) return fail(`webhook_endpoint.disabled does not verify with the alerting endpoint's secret: ${problems.join('; ')}`, DISABLED_EVENT_RULE, shown(g));
    if (body(event).data?.reason !== 'gone') return fail(`webhook_endpoint.disabled carries reason ${String(body(event).data?.reason)}; after a 410 it is gone`, DISABLED_EVENT_RULE, shown(g));
    return pass([`webhook_endpoint.disabled about ${g.goneId}, reason gone, verified with the alerting endpoint's secret; none reached the gone endpoint`]);
  });

  add('health.operational-explicit', 'delivery rules', 'an endpoint of every type (eventTypes left out) receives the orders and no webhook_endpoint.* event', [OPERATIONAL_EXPLICIT_RULE], async ({ signal }) => {
    const g = await once(signal);
    if (g.broken) return fail(g.broken, OPERATIONAL_EXPLICIT_RULE, shown(g));
    if (!g.everyMarked) return fail(`the later order.created did not reach the endpoint of every type ${within}`, OPERATIONAL_EXPLICIT_RULE, shown(g));
    const stray = g.at.every.filter(operational);
    if (stray.length > 0) return fail(`the endpoint of every type received ${stray.map((r) => String(body(r).type)).join(', ')}; eventTypes left out means every order event, and operational events go only to endpoints that name them`, OPERATIONAL_EXPLICIT_RULE, shown(g));
    return pass([`the endpoint of every type received ${g.at.every.length} order event(s), the later order among them, and no webhook_endpoint.* event`]);
  });
}
