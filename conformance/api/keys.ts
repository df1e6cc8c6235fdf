// The 403s of keys that may not do what they ask (issue 67):
//   api.<operationId>.auth.live-key       every operation documenting 403 live-key-not-allowed
//                                         (the sandbox), sent with --live-api-key: 403
//                                         live-key-not-allowed (generated from the contract)
//   api.injectSandboxWriteFault.auth.permission-denied
//                                         a key without any write permission (--limited-api-key)
//                                         arming the fault gets 403 permission-denied, and the
//                                         environment's next write is not faulted
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { answerRules, documentRule } from '../core/contract-rules.ts';
import { defineCheck } from '../core/define.ts';
import type { Auth } from '../core/openapi/client.ts';
import type { ApiOperation } from '../core/openapi/contract.ts';
import { describeOperation } from '../core/openapi/contract.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { fail, pass } from '../core/outcome.ts';
import { statefulRun } from './checks.ts';
import { prepareRequest } from './fixtures.ts';
import { API, type ApiRule } from './rules.ts';
import { Unavailable } from './state.ts';
import type { StatefulChecksOptions } from './stateful.ts';
import { judgeProblem } from './verdict.ts';

const SANDBOX_API = 'sandbox.openapi.yaml';

export interface KeyChecksOptions extends StatefulChecksOptions {
  /** A key of the tenant's live environment. */
  live?: { apiKey: string; apiHash: string };
  /** A key of the tenant environment with no permission. */
  limited?: { apiKey: string; apiHash: string };
}

export function keyChecks(o: KeyChecksOptions): Check[] {
  return [...o.operations.flatMap((op) => liveKeyCheck(op, o)), ...armingCheck(o)];
}

function liveKeyCheck(op: ApiOperation, o: KeyChecksOptions): Check[] {
  const opId = op.spec.operationId;
  const covers = answerRules(opId, 403, 'live-key-not-allowed');
  if (covers.length < 2) return [];
  covers.push(...documentRule(op.api, 'live-key-refused'));
  const rule: ApiRule = { source: `${SANDBOX_API}#/info/description`, quote: 'A live key answers 403 (live-key-not-allowed) on every sandbox operation.', covers };
  return [
    defineCheck({
      book: API,
      id: `${opId}.auth.live-key`,
      title: `${describeOperation(op)}: a live key gets 403 live-key-not-allowed`,
      group: `${op.api} ${opId}`,
      rules: [rule],
      run: statefulRun(o.skipStateful, async (ctx, evidence) => {
        if (!o.live) throw new Unavailable('needs a key of the live environment: --live-api-key and --live-api-hash');
        const parts = await prepareRequest(o.state, op, 'live-key', 'negative');
        const res = await o.client.call(op, { auth: { kind: 'key', ...o.live }, ...parts, label: 'a live key' }, ctx.signal);
        evidence.push(res.exchange);
        return judgeProblem(op, res, { status: 403, slug: 'live-key-not-allowed' }, rule, evidence);
      }),
    }),
  ];
}

const ARM_RULE: ApiRule = {
  source: `${SANDBOX_API}#/paths/~1sandbox~1faults~1next-write/post`,
  quote: 'Arming needs a key with at least one write permission (any but transactions_read and orders_read): a read-only key is refused 403 permission-denied.',
  covers: answerRules('injectSandboxWriteFault', 403, 'permission-denied'),
};

function armingCheck(o: KeyChecksOptions): Check[] {
  const s = o.state;
  if (!s.hasOp('injectSandboxWriteFault') || !s.hasOp('createOrder')) return [];
  return [
    defineCheck({
      book: API,
      id: 'injectSandboxWriteFault.auth.permission-denied',
      title: 'POST /sandbox/faults/next-write: a key without a write permission gets 403 permission-denied; the next write is not faulted',
      group: 'sandbox injectSandboxWriteFault',
      rules: [ARM_RULE],
      run: statefulRun(o.skipStateful, async (ctx, evidence) => {
        if (!o.limited) throw new Unavailable('needs --limited-api-key and --limited-api-hash (a key of the tenant environment with no permission)');
        await s.sandbox();
        const arm = s.op('injectSandboxWriteFault');
        const limited: Auth = { kind: 'key', ...o.limited };
        const res = await o.client.call(arm, { auth: limited, body: { fault: 'outcome-unknown' }, label: 'a key without a write permission arms outcome-unknown' }, ctx.signal);
        evidence.push(res.exchange);
        const v = judgeProblem(arm, res, { status: 403, slug: 'permission-denied' }, ARM_RULE, evidence);
        if (v.status === 'passed') return nextWriteClean(o, ctx, evidence);
        // Armed by mistake: this check's own next write takes the fault, not another check's.
        if (res.status !== null && res.status >= 200 && res.status < 300) await nextWriteClean(o, ctx, evidence);
        return v;
      }),
    }),
  ];
}

/** The environment's next write succeeds: the refused arming armed nothing. */
async function nextWriteClean(o: KeyChecksOptions, ctx: CheckContext, evidence: Exchange[]): Promise<CheckOutcome> {
  const op = o.state.op('createOrder');
  const parts = await prepareRequest(o.state, op, 'after-refused-arming', 'success');
  const res = await o.client.call(op, { auth: o.state.keyAuth(), ...parts, label: 'the next write: create an order' }, ctx.signal);
  evidence.push(res.exchange);
  if (res.status === 503 || res.status === 504) return fail(`the refused arming armed the fault: the next write was answered ${describeAnswer(res)}`, ARM_RULE, evidence);
  return pass();
}
