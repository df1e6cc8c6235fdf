// A delivery pending a retry at each kind of endpoint change (issue 67). One order.created
// goes to five endpoints the scenario adds, each of which holds its first attempt; while those
// are in flight four endpoints change, then every held attempt is answered 500:
//   pending.disabled     the endpoint disabled: its delivery reads disabled and is never sent again
//   pending.rotated      its secret rotated: the same
//   pending.event-types  its eventTypes narrowed to leave order.created out: the same
//   pending.scheme       its signatureScheme switched: the delivery goes on (a scheme alone keeps
//                        the version); its next attempts carry the new scheme's header sets,
//                        signed with the unchanged secret
// The fifth endpoint (the sibling) is left as it is: its own retries are the later marker. The
// watch ends when it has had two more attempts: a retry of a changed endpoint, due a first
// retry delay after the same 500, would have come before the sibling's third attempt (whose
// delay adds the longer second one), however the schedule is scaled.
import type { Exchange } from '../core/check.ts';
import { fail, pass } from '../core/outcome.ts';
import { MANAGEMENT_API } from '../core/coverage.ts';
import type { Received } from './receiver.ts';
import { holdFirst } from './rotation.ts';
import type { SenderRule } from './rules.ts';
import type { SuccessOptions } from './success.ts';
import type { DeliveryRef } from './session.ts';
import { asExchange, eventIdOf, missingSets, parseBody, signatureProblems, switched, type Scheme } from './verify.ts';

const ENDPOINTS = `${MANAGEMENT_API}#/paths/~1v2~1webhooks~1endpoints~1{endpointId}`;

export const PENDING_DISABLED_RULE: SenderRule = {
  covers: ['updateWebhookEndpoint#disabling-disables-pending'],
  source: `${ENDPOINTS}/patch`,
  quote: 'Disabling the endpoint changes its version: its pending deliveries become disabled and are never sent.',
};

export const PENDING_ROTATED_RULE: SenderRule = {
  covers: ['rotateWebhookSecret#rotation-disables-pending'],
  source: `${ENDPOINTS}~1rotate-secret/post`,
  quote: 'A rotated secret changes the endpoint version: pending deliveries of the older version become disabled and are never sent.',
};

export const PENDING_TYPES_RULE: SenderRule = {
  covers: ['updateWebhookEndpoint#event-types-disables-pending'],
  source: `${ENDPOINTS}/patch`,
  quote: 'Pending deliveries of types the endpoint no longer receives become disabled and are never sent.',
};

export const PENDING_SCHEME_RULE: SenderRule = {
  covers: ['updateWebhookEndpoint#scheme-headers'],
  source: `${ENDPOINTS}/patch`,
  quote: 'A new signatureScheme alone keeps the version, the secret and the pending deliveries: their next attempts carry the headers of the new scheme.',
};

const CHANGES = ['disabled', 'rotated', 'event-types', 'scheme'] as const;
type Change = (typeof CHANGES)[number];
const ROLES = [...CHANGES, 'sibling'] as const;
type Role = (typeof ROLES)[number];
/** The sibling's attempts that end the watch: the held first one and two retries. */
const MARKER_ATTEMPTS = 3;

interface Pending {
  evidence: Exchange[];
  eventId: string;
  /** Each endpoint's requests of the order, and how many had arrived when its change was answered. */
  at: Record<Role, Received[]>;
  atChange: Record<Change, number>;
  states: Record<Change, DeliveryRef['state'] | 'unknown'>;
  scheme: { to: Scheme; secret: string };
  /** Why the scenario ended early (every check fails with it); null when it ran to the end. */
  broken: string | null;
}

export interface PendingChangeOptions extends SuccessOptions {
  /** How long the retry schedule may take to reach the sibling's third attempt (--attempts-window-ms). */
  attemptsWindowMs: number;
}

export function pendingChangeChecks(o: PendingChangeOptions): void {
  const { add, session, receiver } = o;
  const within = `within ${o.waitMs / 1000} s`;
  // Two retries of the real schedule take about 35 s (5 s, then 30 s): the marker waits as the attempt checks do.
  const markerMs = Math.max(o.waitMs, o.attemptsWindowMs);
  const held = Object.fromEntries(ROLES.map((r) => [r, holdFirst(500, 500)])) as Record<Role, ReturnType<typeof holdFirst>>;
  for (const r of ROLES) receiver.route(session.path(`pending-${r}`), held[r].responder);
  let memo: Promise<Pending> | null = null;

  const scenario = async (signal: AbortSignal): Promise<Pending> => {
    await o.endpoint();
    const evidence: Exchange[] = [];
    const added: Partial<Record<Role, { id: string; secret: string; scheme: Scheme }>> = {};
    for (const r of ROLES) added[r] = await session.addEndpoint(`pending-${r}`, ['order.created'], evidence, signal);
    const id = (r: Role): string => added[r]!.id;
    const to = switched(added.scheme!.scheme);
    let disabledAlready = false;
    let orderId = '';
    const of = (r: Role): Received[] => receiver.at(session.path(`pending-${r}`)).filter((x) => (parseBody(x) as { data?: { orderId?: unknown } } | undefined)?.data?.orderId === orderId);
    const atChange = { disabled: 0, rotated: 0, 'event-types': 0, scheme: 0 };
    const result = (broken: string | null, eventId = '', states = { disabled: 'unknown', rotated: 'unknown', 'event-types': 'unknown', scheme: 'unknown' } as Pending['states']): Pending => ({
      evidence,
      eventId,
      at: Object.fromEntries(ROLES.map((r) => [r, of(r)])) as Record<Role, Received[]>,
      atChange,
      states,
      scheme: { to, secret: added.scheme!.secret },
      broken,
    });
    try {
      orderId = (await session.createOrder(evidence, signal)).orderId;
      if (!(await receiver.until(() => ROLES.every((r) => of(r).length > 0), o.waitMs, signal))) return result(`order.created did not reach all five endpoints ${within} of creating the order`);
      const eventId = eventIdOf(of('sibling')[0]!) ?? '';
      // Each change lands while the endpoint's first attempt is held, unanswered.
      await session.changeEndpoint(id('disabled'), { active: false }, 'disable an endpoint while its delivery is in flight', evidence, signal);
      disabledAlready = true;
      atChange.disabled = of('disabled').length;
      await session.rotateSecretOf(id('rotated'), evidence, signal);
      atChange.rotated = of('rotated').length;
      await session.changeEndpoint(id('event-types'), { eventTypes: ['order.paid'] }, 'narrow eventTypes to leave order.created out', evidence, signal);
      atChange['event-types'] = of('event-types').length;
      await session.changeEndpoint(id('scheme'), { signatureScheme: to }, `switch the signature scheme to ${to}`, evidence, signal);
      atChange.scheme = of('scheme').length;
      for (const r of ROLES) held[r].release();
      if (!(await receiver.until(() => of('sibling').length >= MARKER_ATTEMPTS, markerMs, signal))) {
        return result(`the unchanged endpoint's delivery, answered 500, was not tried ${MARKER_ATTEMPTS - 1} more times within ${markerMs / 1000} s (the marker that ends the watch; --attempts-window-ms)`, eventId);
      }
      const states = {} as Pending['states'];
      for (const c of CHANGES) states[c] = (await session.findDelivery(eventId, evidence, signal, id(c))).state;
      return result(null, eventId, states);
    } finally {
      for (const r of ROLES) held[r].release();
      for (const r of ROLES.filter((x) => x !== 'disabled' || !disabledAlready)) await session.changeEndpoint(id(r), { active: false }, 'disable an endpoint the scenario added', evidence, signal);
    }
  };
  const pending = (signal: AbortSignal): Promise<Pending> => (memo ??= scenario(signal));
  const shown = (p: Pending): Exchange[] => [...p.evidence, ...ROLES.flatMap((r) => p.at[r].map((x, i) => asExchange(x, `${r} endpoint, attempt ${i + 1}`)))];

  const neverAgain = (change: Exclude<Change, 'scheme'>, what: string, rule: SenderRule): void => {
    add(`pending.${change}`, 'delivery rules', `a delivery pending a retry when ${what} becomes disabled and is never sent again`, [rule], async ({ signal }) => {
      const p = await pending(signal);
      if (p.broken) return fail(p.broken, rule, shown(p));
      // A retry already under way at the change (the held attempt cut by the sender's timeout) may still arrive.
      const allowed = p.atChange[change] > 1 ? 1 : 0;
      const later = p.at[change].length - p.atChange[change];
      if (later > allowed) return fail(`the delivery of event ${p.eventId} was sent ${later} more time(s) after ${what}, while the unchanged endpoint had ${p.at.sibling.length} attempts`, rule, shown(p));
      if (p.states[change] !== 'disabled') return fail(`after ${what}, the delivery of event ${p.eventId} reads ${p.states[change]}, not disabled`, rule, shown(p));
      return pass([`not sent again while the unchanged endpoint had ${p.at.sibling.length} attempts; the delivery reads disabled`]);
    });
  };
  neverAgain('disabled', 'the endpoint is disabled', PENDING_DISABLED_RULE);
  neverAgain('rotated', "the endpoint's secret is rotated", PENDING_ROTATED_RULE);
  neverAgain('event-types', "the endpoint's eventTypes no longer include the event's type", PENDING_TYPES_RULE);

  add('pending.scheme', 'delivery rules', "a delivery pending a retry when the endpoint's signatureScheme changes goes on: its next attempts carry the new scheme's headers, signed with the same secret", [PENDING_SCHEME_RULE], async ({ signal }) => {
    const p = await pending(signal);
    if (p.broken) return fail(p.broken, PENDING_SCHEME_RULE, shown(p));
    const later = p.at.scheme.slice(p.atChange.scheme);
    if (later.length === 0) return fail(`the delivery of event ${p.eventId} was not tried again after the scheme change (it reads ${p.states.scheme}), while the unchanged endpoint had ${p.at.sibling.length} attempts: a new signatureScheme alone keeps the pending deliveries`, PENDING_SCHEME_RULE, shown(p));
    for (const [i, r] of later.entries()) {
      const missing = missingSets(r, p.scheme.to);
      if (missing.length > 0) return fail(`attempt ${p.atChange.scheme + i + 1} (after the change) lacks ${missing.join(' and ')}: the endpoint's scheme is now ${p.scheme.to}`, PENDING_SCHEME_RULE, shown(p));
      const problems = signatureProblems(r, p.scheme.secret);
      if (problems.length > 0) return fail(`attempt ${p.atChange.scheme + i + 1} (after the change) does not verify with the endpoint's secret: ${problems.join('; ')}`, PENDING_SCHEME_RULE, shown(p));
    }
    return pass([`${later.length} attempt(s) after the switch to ${p.scheme.to}, each in the new scheme`]);
  });
}
