// Back-pressure from the receiver: the first attempt to the scenario's path is answered
// `429 Retry-After: 3`; a second order is created while that holds. Nothing may reach the
// endpoint before the 3 s are over: neither that delivery's retry (`webhooks#retry-after`) nor
// the other order's delivery (`webhooks#retry-after-endpoint`). A shortened retry schedule
// (WEBHOOK_RETRY_SCALE) must not shorten it, so this holds against a target on one too.
import { fail, pass } from '../core/outcome.ts';
import type { CheckOutcome, Exchange } from '../core/check.ts';
import { SuiteReceiver, answer, type Received } from './receiver.ts';
import { RETRY_AFTER_ENDPOINT_RULE, RETRY_AFTER_RULE } from './rules.ts';
import type { AddCheck } from './rotation.ts';
import type { Endpoint, SenderSession } from './session.ts';
import { asExchange, eventIdOf } from './verify.ts';

/** The receiver's Retry-After, seconds: the figure issue 69 names, small enough for a cheap check. */
export const RETRY_AFTER_S = 3;
/** The sender reads the answer after the receiver sent it: a new order made sooner could be claimed before the answer is known. */
const ANSWER_SETTLE_MS = 300;

export interface RetryAfterOptions {
  add: AddCheck;
  session: SenderSession;
  receiver: SuiteReceiver;
  endpoint: () => Promise<Endpoint>;
  waitMs: number;
}

interface Seen {
  first: Received | undefined;
  later: Received[];
  evidence: Exchange[];
}

export function retryAfterChecks(o: RetryAfterOptions): void {
  const { session, receiver } = o;
  const name = 'retry-after';
  const path = session.path(name);
  let throttled = false;
  receiver.route(path, (r, res) => {
    if (throttled) return answer(200)(r, res);
    throttled = true;
    answer(429, { 'retry-after': String(RETRY_AFTER_S) })(r, res);
  });
  let run: Promise<Seen> | null = null;
  const scenario = (): Promise<Seen> =>
    (run ??= (async () => {
      await o.endpoint();
      const evidence: Exchange[] = [];
      const signal = new AbortController().signal;
      await session.pointTo(name, evidence, signal);
      await session.createOrder(evidence, signal);
      await receiver.until(() => receiver.at(path).length >= 1, o.waitMs, signal);
      await SuiteReceiver.sleep(ANSWER_SETTLE_MS, signal);
      await session.createOrder(evidence, signal);
      const first = receiver.at(path)[0];
      const firstId = first && eventIdOf(first);
      const done = (): boolean => {
        const all = receiver.at(path);
        return all.filter((r) => eventIdOf(r) === firstId).length >= 2 && all.some((r) => eventIdOf(r) !== firstId);
      };
      await receiver.until(done, o.waitMs, signal);
      return { first, later: receiver.at(path).slice(1), evidence };
    })());
  const judge = (seen: Seen, sameEvent: boolean): CheckOutcome => {
    const rule = sameEvent ? RETRY_AFTER_RULE : RETRY_AFTER_ENDPOINT_RULE;
    const { first, later, evidence } = seen;
    const shown = [...evidence, ...(first ? [asExchange(first, `attempt answered 429 Retry-After: ${RETRY_AFTER_S}`)] : []), ...later.map((r, i) => asExchange(r, `request ${i + 2}`))];
    if (!first) return fail(`no delivery arrived within ${o.waitMs / 1000} s of creating an order`, rule, shown);
    const mine = later.filter((r) => (eventIdOf(r) === eventIdOf(first)) === sameEvent);
    const what = sameEvent ? "the throttled delivery's retry" : "the other order's delivery";
    if (mine.length === 0) return fail(`${what} did not arrive within ${o.waitMs / 1000} s`, rule, shown);
    const after = Math.round(mine[0]!.receivedMono - first.receivedMono);
    if (after < RETRY_AFTER_S * 1000) return fail(`${what} arrived ${after} ms after the 429 with Retry-After: ${RETRY_AFTER_S}: no attempt to the endpoint before ${RETRY_AFTER_S * 1000} ms`, rule, shown);
    return pass([`${what} ${after} ms after the 429`]);
  };
  o.add('retry-after.delivery', 'delivery rules', `a 429 with Retry-After: ${RETRY_AFTER_S} delays that delivery's next attempt at least ${RETRY_AFTER_S} s`, [RETRY_AFTER_RULE], async () => judge(await scenario(), true));
  o.add('retry-after.endpoint', 'delivery rules', `while a 429's Retry-After holds, the endpoint gets no other delivery either`, [RETRY_AFTER_ENDPOINT_RULE], async () => judge(await scenario(), false));
}
