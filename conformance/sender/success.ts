// Any 2xx is a success: the suite's receiver answers each event with another 2xx status (not
// only 200), and each must be delivered by its first attempt, never retried.
import { fail, pass } from '../core/outcome.ts';
import type { Exchange } from '../core/check.ts';
import { SuiteReceiver, answer } from './receiver.ts';
import { ANY_2XX_RULE } from './rules.ts';
import type { AddCheck } from './rotation.ts';
import type { Endpoint, SenderSession } from './session.ts';
import { asExchange, eventIdOf } from './verify.ts';

/** The 2xx statuses the receiver answers, one per event (200 is what every other scenario answers). */
export const SUCCESS_STATUSES = [201, 202, 204, 206, 299] as const;
/** The real schedule retries about 5 s after a failure: watch at least that long. */
const MIN_WATCH_MS = 6_000;

export interface SuccessOptions {
  add: AddCheck;
  session: SenderSession;
  receiver: SuiteReceiver;
  endpoint: () => Promise<Endpoint>;
  waitMs: number;
  quietMs: number;
}

export function successChecks(o: SuccessOptions): void {
  const { session, receiver } = o;
  const path = session.path('any-2xx');
  const statusOf = new Map<string, number>();
  receiver.route(path, (r, res) => {
    const id = eventIdOf(r) ?? '';
    if (!statusOf.has(id)) statusOf.set(id, SUCCESS_STATUSES[statusOf.size % SUCCESS_STATUSES.length]!);
    answer(statusOf.get(id)!)(r, res);
  });
  o.add('success.any-2xx', 'delivery rules', `any 2xx answer delivers: events answered ${SUCCESS_STATUSES.join(', ')} are never retried`, [ANY_2XX_RULE], async () => {
    await o.endpoint();
    const evidence: Exchange[] = [];
    const signal = new AbortController().signal;
    await session.pointTo('any-2xx', evidence, signal);
    for (let i = 0; i < SUCCESS_STATUSES.length; i++) await session.createOrder(evidence, signal);
    const events = (): string[] => [...new Set(receiver.at(path).map((r) => eventIdOf(r) ?? ''))];
    await receiver.until(() => events().length >= SUCCESS_STATUSES.length, o.waitMs, signal);
    await SuiteReceiver.sleep(Math.max(o.quietMs, MIN_WATCH_MS), signal);
    const got = receiver.at(path);
    const shown = [...evidence, ...got.map((r, i) => asExchange(r, `request ${i + 1}, answered ${statusOf.get(eventIdOf(r) ?? '') ?? '?'}`))];
    if (events().length < SUCCESS_STATUSES.length) return fail(`${events().length} of ${SUCCESS_STATUSES.length} order.created deliveries arrived within ${o.waitMs / 1000} s`, ANY_2XX_RULE, shown);
    const retried = events().filter((id) => got.filter((r) => eventIdOf(r) === id).length > 1);
    if (retried.length > 0) {
      const statuses = retried.map((id) => statusOf.get(id)).join(', ');
      return fail(`event(s) answered ${statuses} were sent again: any 2xx delivers, so the delivery ends with that answer`, ANY_2XX_RULE, shown);
    }
    return pass([`${SUCCESS_STATUSES.length} events, each answered once with ${SUCCESS_STATUSES.join(', ')}`]);
  });
}
