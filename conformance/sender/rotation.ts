// Rule 8 from the sender's side: after a rotation the previous secret stops signing new
// attempts at once; only a request already in flight at the rotation may carry it. Each check
// holds the first attempt of an event while it rotates (that attempt is in flight at the
// rotation and may carry either secret), then watches what is signed afterwards:
//   rotation.new-secret       the endpoint's signing secret: an event created after the
//                             rotation verifies with the new secret alone
//   rotation.callback-secret  the environment's callback secret: a pending callback is not
//                             disabled, and its next attempt verifies with the new secret alone
// Both run at the end of the sender target: the endpoint's and the environment's secrets are
// rotated for good (the session keeps the endpoint's new one).
import type { CheckContext, CheckOutcome, Exchange, SpecRule } from '../core/check.ts';
import { fail, pass } from '../core/outcome.ts';
import { answer, header } from './receiver.ts';
import type { Received, Responder, SuiteReceiver } from './receiver.ts';
import { CALLBACK_ROTATION_RULE, ROTATION_RULE, SIGNATURE_RULE } from './rules.ts';
import type { SenderRule } from './rules.ts';
import { StepFailed } from './session.ts';
import type { Endpoint, SenderSession } from './session.ts';
import { asExchange, eventIdOf, parseBody, signatureProblems } from './verify.ts';
import { readSignature } from '../core/signature.ts';
import { SIGNATURE_HEADER } from '../../signing/signature.ts';

/** Adds a check through defineCheck, with the sender's handling of a failed step (checks.ts). */
export type AddCheck = (id: string, group: string, title: string, rules: SenderRule[], run: (ctx: CheckContext) => Promise<CheckOutcome>) => void;

export interface RotationOptions {
  add: AddCheck;
  session: SenderSession;
  receiver: SuiteReceiver;
  endpoint: () => Promise<Endpoint>;
  waitMs: number;
  /** The callback secret before the run's rotation (--callback-secret), to name it when it is used. */
  callbackSecret?: string;
}

const GROUP = 'delivery rules';

export function rotationChecks(o: RotationOptions): void {
  const { add, session, receiver } = o;
  const within = `within ${o.waitMs / 1000} s`;

  const eventsPath = session.path('rotation');
  const events = holdFirst(200, 200);
  receiver.route(eventsPath, events.responder);
  add('rotation.new-secret', GROUP, 'after a secret rotation, an event created after it is signed with the new secret alone (only the attempt in flight at the rotation may carry the previous one)', [ROTATION_RULE], async () => {
    await o.endpoint();
    const evidence: Exchange[] = [];
    const signal = new AbortController().signal;
    const ofOrder = (orderId: string): Received[] => receiver.at(eventsPath).filter((r) => (parseBody(r) as { data?: { orderId?: unknown } } | undefined)?.data?.orderId === orderId);
    await session.pointTo('rotation', evidence, signal);
    const before = await session.createOrder(evidence, signal);
    let secrets: { previous: string; secret: string };
    try {
      if (!(await receiver.until(() => ofOrder(before.orderId).length > 0, o.waitMs, signal))) return fail(`no delivery arrived ${within} of creating an order`, ROTATION_RULE, evidence);
      secrets = await session.rotate(evidence, signal);
    } finally {
      events.release();
    }
    const after = await session.createOrder(evidence, signal);
    await receiver.until(() => ofOrder(after.orderId).length > 0, o.waitMs, signal);
    const inFlight = ofOrder(before.orderId)[0]!;
    const later = ofOrder(after.orderId);
    const shown = [...evidence, asExchange(inFlight, 'in flight at the rotation'), ...later.map((r, i) => asExchange(r, `event created after the rotation, attempt ${i + 1}`))];
    if (secrets.secret === secrets.previous) return fail('the rotation answered the secret it replaces: a rotation issues a new signing secret', ROTATION_RULE, evidence);
    if (later.length === 0) return fail(`an event created after the rotation did not arrive ${within}`, ROTATION_RULE, shown);
    return judge(later, inFlight, secrets, 'an event created after the rotation', shown, ROTATION_RULE);
  });

  const callbackPath = session.path('callback-rotation');
  const callbacks = holdFirst(500, 200);
  receiver.route(callbackPath, callbacks.responder);
  add('rotation.callback-secret', GROUP, "after a callback secret rotation, the pending callback's next attempt is signed with the new secret alone", [CALLBACK_ROTATION_RULE], async () => {
    await o.endpoint();
    const evidence: Exchange[] = [];
    const signal = new AbortController().signal;
    let secret: string;
    try {
      await session.settledPayout('callback-rotation', evidence, signal);
      if (!(await receiver.until(() => receiver.at(callbackPath).length > 0, o.waitMs, signal))) return fail(`no callback arrived ${within} of settling a payout`, CALLBACK_ROTATION_RULE, evidence);
      secret = await session.rotateCallbackSecret(evidence, signal);
    } catch (err) {
      if (err instanceof StepFailed && err.unavailable) throw new StepFailed(`could not trigger the callback or rotate its secret: ${err.message}`, err.exchanges, true);
      throw err;
    } finally {
      callbacks.release();
    }
    const first = receiver.at(callbackPath)[0]!;
    const attempts = (): Received[] => receiver.at(callbackPath).filter((r) => eventIdOf(r) === eventIdOf(first));
    await receiver.until(() => attempts().length > 1, o.waitMs, signal);
    const later = attempts().slice(1);
    if (secret === o.callbackSecret) return fail('the rotation answered the callback secret it replaces: a rotation issues a new one', CALLBACK_ROTATION_RULE, evidence);
    const shown = [...evidence, ...attempts().map((r, i) => asExchange(r, i === 0 ? 'in flight at the rotation, answered 500' : `attempt ${i + 1}`))];
    if (later.length === 0) return fail(`the callback answered 500 was not tried again ${within}: a pending callback is not disabled by the rotation`, CALLBACK_ROTATION_RULE, shown);
    return judge(later, first, { previous: o.callbackSecret, secret }, "the pending callback's next attempt", shown, CALLBACK_ROTATION_RULE);
  });
}

/** Every attempt in `later` verifies with the new secret; the one in flight with either. */
function judge(later: Received[], inFlight: Received, secrets: { previous?: string | undefined; secret: string }, what: string, shown: Exchange[], rule: SpecRule): CheckOutcome {
  const withPrevious = (r: Received): boolean => secrets.previous !== undefined && signatureProblems(r, secrets.previous).length === 0;
  for (const [i, r] of later.entries()) {
    const problems = signatureProblems(r, secrets.secret);
    const extra = v1Counts(r).find(([, count]) => count > 1);
    if (problems.length === 0 && extra) {
      return fail(`${what} (attempt ${i + 1} after the rotation) carries ${extra[1]} v1 values in ${extra[0]}: after a rotation each scheme's header carries one v1, made with the new secret (only a request already in flight may carry the previous one)`, rule, shown);
    }
    if (problems.length === 0) continue;
    if (withPrevious(r)) return fail(`${what} (attempt ${i + 1} after the rotation) is signed with the previous secret: the previous secret stops signing new attempts at once; only a request already in flight at the rotation may carry it`, rule, shown);
    return fail(`${what} (attempt ${i + 1} after the rotation): ${problems.join('; ')}`, SIGNATURE_RULE, shown);
  }
  if (withPrevious(inFlight)) return pass(['the attempt in flight at the rotation carried the previous secret (allowed)']);
  const problems = signatureProblems(inFlight, secrets.secret);
  if (problems.length === 0) return pass(['the attempt in flight at the rotation carried the new secret']);
  if (secrets.previous === undefined) return pass(['the attempt in flight at the rotation was not verified (no --callback-secret: the previous secret is unknown)']);
  return fail(`the attempt in flight at the rotation verifies with neither the previous nor the new secret: ${problems.join('; ')}`, SIGNATURE_RULE, shown);
}

/** Holds the first request until `release()`, then answers it `heldStatus`; answers every other request `status`. */
export function holdFirst(heldStatus: number, status: number): { responder: Responder; release: () => void } {
  let first = true;
  let released = false;
  let waiting: (() => void) | null = null;
  return {
    responder: (r, res) => {
      if (!first || released) return answer(status)(r, res);
      first = false;
      waiting = () => answer(heldStatus)(r, res);
    },
    release: () => {
      released = true;
      waiting?.();
      waiting = null;
    },
  };
}

/** How many v1 values each signature header of `r` carries (0 when it is missing or malformed). */
function v1Counts(r: Received): Array<[string, number]> {
  const value = header(r, SIGNATURE_HEADER);
  const read = value === undefined ? { malformed: 'missing' } : readSignature(value);
  const standard = header(r, 'webhook-signature');
  return [
    [SIGNATURE_HEADER, 'malformed' in read ? 0 : read.v1.length],
    ['webhook-signature', standard === undefined ? 0 : standard.split(' ').filter((e) => e.startsWith('v1,')).length],
  ];
}
