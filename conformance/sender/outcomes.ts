// The payout-completed callback for every settlement outcome the sandbox documents
// (settleSandboxPayout: `success` and `cancelled`). The success callback is the one the
// payout.completed.* checks judge (checks.ts); every other outcome gets a payout of its own,
// with notifyUrl at the suite, settled with it. Each callback is judged against the message's
// payload schema, its signature (the callback secret) and the payout's own fields, with
// `status` the status given. A cancelled payout gives its amount back to the wallet, so the
// run spends nothing more.
import type { MessageSpec } from '../core/asyncapi.ts';
import type { CheckOutcome, Exchange } from '../core/check.ts';
import { fail, pass } from '../core/outcome.ts';
import { answer } from './receiver.ts';
import type { Received, SuiteReceiver } from './receiver.ts';
import type { AddCheck } from './rotation.ts';
import type { SenderRule } from './rules.ts';
import { StepFailed } from './session.ts';
import type { SenderSession, SettleStatus } from './session.ts';
import { asExchange, parseBody, payloadProblems, signatureProblems } from './verify.ts';

export const EVERY_OUTCOME_RULE: SenderRule = {
  covers: ['settleSandboxPayout#callback-every-outcome'],
  source: 'sandbox.openapi.yaml#/paths/~1sandbox~1payouts~1{transactionId}~1settle/post',
  quote: 'Either way (success or cancelled) completedDate is set and, when the payout has a notifyUrl, the signed payout-completed callback (transactionId, thirdPartyId, amount, status = the status given here) is sent to it.',
};

/** Every value of SandboxSettleRequest.status: a new one in the contract fails the type check here. */
const OUTCOMES = ['success', 'cancelled'] as const satisfies readonly SettleStatus[];
type Every<T extends readonly string[]> = Exclude<SettleStatus, T[number]> extends never ? T : never;
const EVERY: Every<typeof OUTCOMES> = OUTCOMES;

export interface Payout {
  transactionId: string;
  thirdPartyId: string;
  amount: unknown;
}

/** The success callback the payout.completed.* checks judge. */
export interface Settled {
  payout: Payout | null;
  deliveries: Received[];
  evidence: Exchange[];
  unavailable?: StepFailed;
}

export interface OutcomeOptions {
  add: AddCheck;
  session: SenderSession;
  receiver: SuiteReceiver;
  message: MessageSpec;
  waitMs: number;
  callbackSecret?: string;
  /** The success callback, settled once for the payout.completed.* checks. */
  success: () => Promise<Settled>;
}

export function callbackOutcomeChecks(o: OutcomeOptions): void {
  const { session, receiver } = o;
  const others = EVERY.filter((s) => s !== 'success');
  for (const s of others) receiver.route(session.path(`callback-${s}`), answer(200));

  const settle = async (status: SettleStatus, signal: AbortSignal): Promise<Settled> => {
    if (status === 'success') return o.success();
    const evidence: Exchange[] = [];
    const path = session.path(`callback-${status}`);
    try {
      const payout = await session.settledPayout(`callback-${status}`, evidence, signal, status);
      await receiver.until(() => receiver.at(path).length > 0, o.waitMs, signal);
      return { payout, deliveries: receiver.at(path), evidence };
    } catch (err) {
      if (!(err instanceof StepFailed)) throw err;
      return { payout: null, deliveries: [], evidence, unavailable: new StepFailed(`could not settle a payout as ${status}: ${err.message}`, err.exchanges, err.unavailable) };
    }
  };

  o.add('payout.completed.every-outcome', 'payout.completed', `a payout settled with each outcome (${EVERY.join(', ')}) gets its signed payout-completed callback, valid against the message and with status the outcome given`, [EVERY_OUTCOME_RULE], async ({ signal }) => {
    const notes: string[] = [];
    for (const status of EVERY) {
      const settled = await settle(status, signal);
      if (settled.unavailable) throw settled.unavailable;
      const outcome = judge(status, settled);
      if (outcome) return outcome;
      notes.push(`${status}: ${settled.deliveries.length} callback(s), each valid and signed`);
    }
    if (o.callbackSecret === undefined) notes.push('no --callback-secret: the signatures were not verified');
    return pass(notes);
  });

  /** The failure of the callbacks of one outcome, or null when each is right. */
  function judge(status: SettleStatus, s: Settled): CheckOutcome | null {
    const shown = [...s.evidence, ...s.deliveries.map((r, i) => asExchange(r, `${status} callback ${i + 1}`))];
    if (s.deliveries.length === 0) return fail(`no payout-completed callback arrived within ${o.waitMs / 1000} s of settling a payout as ${status}`, EVERY_OUTCOME_RULE, shown);
    for (const [i, r] of s.deliveries.entries()) {
      const problems = [...payloadProblems(r, o.message), ...fieldProblems(r, s.payout, status), ...(o.callbackSecret === undefined ? [] : signatureProblems(r, o.callbackSecret))];
      if (problems.length > 0) return fail(`the callback of the payout settled as ${status} (${i + 1} of ${s.deliveries.length}): ${problems.join('; ')}`, EVERY_OUTCOME_RULE, shown);
    }
    return null;
  }
}

/** The callback's fields that must be the payout's own, and `status` the outcome given. */
export function fieldProblems(r: Received, payout: Payout | null, status: SettleStatus): string[] {
  const body = parseBody(r) as Record<string, unknown> | undefined;
  if (!payout || !body) return [];
  const wrong: string[] = [];
  if (body.transactionId !== payout.transactionId) wrong.push(`transactionId ${JSON.stringify(body.transactionId)} (expected ${payout.transactionId})`);
  if (body.thirdPartyId !== payout.thirdPartyId) wrong.push(`thirdPartyId ${JSON.stringify(body.thirdPartyId)} (expected ${payout.thirdPartyId})`);
  if (body.amount !== payout.amount) wrong.push(`amount ${JSON.stringify(body.amount)} (expected ${JSON.stringify(payout.amount)})`);
  if (body.status !== status) wrong.push(`status ${JSON.stringify(body.status)} (the payout was settled as ${status})`);
  return wrong.map((w) => `body ${w}`);
}
