// Recovery as the contract paces and scopes it (POST /v2/webhooks/endpoints/{endpointId}/recover).
// Two endpoints the scenario adds, A and B, both receiving order.created and order.paid; the
// first order is paid, then more orders are created, each delivered to both (answered 200).
// A's eventTypes are then narrowed to order.created, and A's deliveries recovered (include all):
//   recover.paced         the deliveries become due x-spacing-ms apart: the k-th to arrive
//                         (0-based) cannot come before k spacings after the request was sent.
//                         Judged from that bound alone, which load only makes later, never from
//                         the gaps between arrivals (a busy sender may send two late deliveries
//                         back to back); nor by their order (orders made in one millisecond may
//                         tie on createdAt)
//   recover.per-endpoint  only A's deliveries go again, only of the types it receives now: B
//                         gets none of the events again, A not the order.paid
// The watch for strays ends at later markers: a test webhook from A once every recovered
// delivery has arrived (the order.paid one would have been due before the last of them), and
// then one from B.
import { performance } from 'node:perf_hooks';
import { RECOVERY } from '../../generated/vocabulary.ts';
import type { Exchange } from '../core/check.ts';
import { MANAGEMENT_API } from '../core/coverage.ts';
import { fail, pass } from '../core/outcome.ts';
import { SuiteReceiver, answer } from './receiver.ts';
import type { Received } from './receiver.ts';
import type { SenderRule } from './rules.ts';
import { StepFailed } from './session.ts';
import type { SuccessOptions } from './success.ts';
import { asExchange, eventIdOf, parseBody } from './verify.ts';

const RECOVER = `${MANAGEMENT_API}#/paths/~1v2~1webhooks~1endpoints~1{endpointId}~1recover/post`;

export const PACED_RULE: SenderRule = {
  covers: ['recoverDeliveries#paced'],
  source: `${RECOVER}; DeliveryRecovery.x-spacing-ms`,
  quote: `Paced so the receiver is not flooded: the deliveries become due one after another, oldest first, DeliveryRecovery.x-spacing-ms apart (${RECOVERY.spacingMs} ms).`,
};

export const PER_ENDPOINT_RULE: SenderRule = {
  covers: ['recoverDeliveries#per-endpoint'],
  source: RECOVER,
  quote: "Only this endpoint's deliveries go again, and only of the types it receives now; another endpoint's deliveries of the same events are left alone.",
};

/** Orders created (the first one paid): enough recovered deliveries that a sender sending them at once is far from the bound. */
const ORDERS = 8;
/** Clock granularity between the suite's request and the implementation's `now` (both real time). */
const MARGIN_MS = 10;
const POLL_MS = 250;
const TYPES = ['order.created', 'order.paid'];

type Body = { type?: unknown; data?: { orderId?: unknown } };
const body = (r: Received): Body => (parseBody(r) as Body | undefined) ?? {};

interface Recovered {
  evidence: Exchange[];
  /** The order.created events, oldest first; the order.paid event of the first order. */
  created: string[];
  paid: string;
  /** When the recover request was sent (the suite's monotonic clock). */
  sentMono: number;
  /** What reached A and B after the request was sent. */
  a: Received[];
  b: Received[];
  markers: { a: string; b: string };
  broken: string | null;
}

export function recoverPacedChecks(o: SuccessOptions): void {
  const { add, session, receiver } = o;
  const within = `within ${o.waitMs / 1000} s`;
  const paths = { a: session.path('paced-a'), b: session.path('paced-b') };
  receiver.route(paths.a, answer(200));
  receiver.route(paths.b, answer(200));
  let memo: Promise<Recovered> | null = null;

  /** Polls the activity until each of the endpoint's `count` deliveries reads delivered; answers the oldest createdAt. */
  const allDelivered = async (endpointId: string, count: number, evidence: Exchange[], signal: AbortSignal): Promise<string> => {
    for (let i = 0; i <= Math.ceil(o.waitMs / POLL_MS); i++) {
      const list = await session.deliveriesOf(endpointId, i === 0 ? evidence : [], signal);
      if (list.length >= count && list.every((d) => d.state === 'delivered')) return list.map((d) => d.createdAt).sort()[0]!;
      await SuiteReceiver.sleep(POLL_MS, signal);
    }
    throw new StepFailed(`the ${count} deliveries to endpoint ${endpointId}, answered 200, did not all read delivered ${within}`, evidence);
  };

  const scenario = async (signal: AbortSignal): Promise<Recovered> => {
    await o.endpoint();
    const evidence: Exchange[] = [];
    const a = await session.addEndpoint('paced-a', TYPES, evidence, signal);
    const b = await session.addEndpoint('paced-b', TYPES, evidence, signal);
    const result: Recovered = { evidence, created: [], paid: '', sentMono: 0, a: [], b: [], markers: { a: '', b: '' }, broken: null };
    try {
      const orders: string[] = [];
      for (let i = 0; i < ORDERS; i++) {
        const order = await session.createOrder(evidence, signal);
        orders.push(order.orderId);
        if (i === 0) await session.payOrder(order, evidence, signal);
      }
      const of = (path: string, type: string, orderId: string): Received | undefined => receiver.at(path).find((r) => body(r).type === type && body(r).data?.orderId === orderId);
      const arrived = (path: string): boolean => orders.every((id) => of(path, 'order.created', id)) && of(path, 'order.paid', orders[0]!) !== undefined;
      if (!(await receiver.until(() => arrived(paths.a) && arrived(paths.b), o.waitMs, signal))) return { ...result, broken: `the orders' events did not reach both endpoints ${within}` };
      result.created = orders.map((id) => eventIdOf(of(paths.a, 'order.created', id)!) ?? '');
      result.paid = eventIdOf(of(paths.a, 'order.paid', orders[0]!)!) ?? '';
      // A pending delivery is not recovered: both endpoints' must read delivered first.
      const since = await allDelivered(a.id, ORDERS + 1, evidence, signal);
      await allDelivered(b.id, ORDERS + 1, evidence, signal);
      await session.changeEndpoint(a.id, { eventTypes: ['order.created'] }, "narrow endpoint A's eventTypes to order.created", evidence, signal);
      const [seenA, seenB] = [receiver.at(paths.a).length, receiver.at(paths.b).length];
      result.sentMono = performance.now();
      await session.recover({ since, include: 'all' }, evidence, signal, a.id);
      const again = (): Received[] => receiver.at(paths.a).slice(seenA);
      if (!(await receiver.until(() => result.created.every((id) => again().some((r) => eventIdOf(r) === id)), o.waitMs, signal))) {
        return { ...result, a: again(), b: receiver.at(paths.b).slice(seenB), broken: `the ${ORDERS} order.created deliveries of endpoint A were not all recovered ${within} of the request` };
      }
      result.markers.a = await session.sendTest(evidence, signal, a.id);
      await receiver.until(() => again().some((r) => eventIdOf(r) === result.markers.a), o.waitMs, signal);
      result.markers.b = await session.sendTest(evidence, signal, b.id);
      await receiver.until(() => receiver.at(paths.b).slice(seenB).some((r) => eventIdOf(r) === result.markers.b), o.waitMs, signal);
      return { ...result, a: again(), b: receiver.at(paths.b).slice(seenB) };
    } finally {
      for (const e of [a, b]) await session.changeEndpoint(e.id, { active: false }, 'disable an endpoint the scenario added', evidence, signal);
    }
  };
  const recovered = (signal: AbortSignal): Promise<Recovered> => (memo ??= scenario(signal));
  const shown = (r: Recovered): Exchange[] => [
    ...r.evidence,
    ...r.a.map((x, i) => asExchange(x, `endpoint A after the recover request ${i + 1}: ${String(body(x).type)}`)),
    ...r.b.map((x, i) => asExchange(x, `endpoint B after the recover request ${i + 1}: ${String(body(x).type)}`)),
  ];

  add('recover.paced', 'delivery rules', `recovered deliveries become due oldest first, ${RECOVERY.spacingMs} ms apart: the k-th arrives no sooner than k spacings after the request`, [PACED_RULE], async ({ signal }) => {
    const r = await recovered(signal);
    if (r.broken) return fail(r.broken, PACED_RULE, shown(r));
    // Each arrives no sooner than its own due time, so the k-th arrival no sooner than the k-th due time.
    const after = r.created.map((id) => r.a.find((x) => eventIdOf(x) === id)!.receivedMono - r.sentMono).sort((x, y) => x - y);
    const shownMs = after.map(Math.round).join(', ');
    const early = after.findIndex((ms, k) => ms < k * RECOVERY.spacingMs - MARGIN_MS);
    if (early >= 0) {
      return fail(`the ${ordinal(early + 1)} recovered delivery to arrive came ${Math.round(after[early]!)} ms after the recover request was sent; due ${RECOVERY.spacingMs} ms one after another, it cannot come before ${early * RECOVERY.spacingMs} ms (arrivals: ${shownMs} ms)`, PACED_RULE, shown(r));
    }
    return pass([`${r.created.length} recovered deliveries arrived ${shownMs} ms after the request (the k-th no sooner than k × ${RECOVERY.spacingMs} ms)`]);
  });

  add('recover.per-endpoint', 'delivery rules', "a recovery sends only that endpoint's deliveries, only of the types it receives now: another endpoint gets none of the events again", [PER_ENDPOINT_RULE], async ({ signal }) => {
    const r = await recovered(signal);
    if (r.broken) return fail(r.broken, PER_ENDPOINT_RULE, shown(r));
    const events = new Set([...r.created, r.paid]);
    const strays = r.b.filter((x) => events.has(eventIdOf(x) ?? ''));
    if (strays.length > 0) return fail(`${strays.length} of the events went again to endpoint B, whose deliveries were not recovered (the recovery was of endpoint A)`, PER_ENDPOINT_RULE, shown(r));
    const paid = r.a.filter((x) => eventIdOf(x) === r.paid);
    if (paid.length > 0) return fail(`the order.paid delivery went again to endpoint A after its eventTypes were narrowed to order.created: only the types it receives now go again`, PER_ENDPOINT_RULE, shown(r));
    if (!r.b.some((x) => eventIdOf(x) === r.markers.b)) return fail(`the test webhook sent from endpoint B (the marker that ends the watch) did not arrive ${within}`, PER_ENDPOINT_RULE, shown(r));
    return pass([`endpoint A got its ${r.created.length} order.created again and not order.paid; endpoint B nothing before its test webhook`]);
  });
}

const ordinal = (n: number): string => `${n}${n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th'}`;
