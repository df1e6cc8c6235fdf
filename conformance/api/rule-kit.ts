// What the stateful rule checks of api/strict.ts and api/list-rules.ts share: the check they
// declare only when the target has its operations, a call that keeps its exchange as evidence,
// and a success that must hold before the rule itself is judged.
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import type { ApiClient, ApiRequest, ApiResponse } from '../core/openapi/client.ts';
import { fail } from '../core/outcome.ts';
import { statefulRun } from './checks.ts';
import { judgeSuccess } from './verdict.ts';
import { Unavailable } from './state.ts';
import type { ApiState } from './state.ts';
import { API, type ApiRule } from './rules.ts';

const GROUP = 'stateful rules';

export interface RuleKit {
  /** The checks declared so far. */
  checks: Check[];
  /** Declares `api.rules.<id>` when the target has every operation of `ops`. */
  check(id: string, title: string, rules: ApiRule[], ops: string[], run: (ctx: CheckContext, evidence: Exchange[]) => Promise<CheckOutcome>): void;
  /** Calls the operation, its exchange kept as evidence. */
  call(evidence: Exchange[], operationId: string, req: ApiRequest, ctx: CheckContext): Promise<ApiResponse>;
  /** Null when the answer is the operation's success; else the failure, or Unavailable when the step cannot be judged. */
  expectOk(operationId: string, res: ApiResponse, evidence: Exchange[], what: string): CheckOutcome | null;
}

export function ruleKit(o: { state: ApiState; client: ApiClient; skipStateful: boolean }): RuleKit {
  const s = o.state;
  const checks: Check[] = [];
  return {
    checks,
    check(id, title, rules, ops, run) {
      if (!ops.every((op) => s.hasOp(op))) return;
      checks.push(defineCheck({ book: API, id: `rules.${id}`, title, group: GROUP, rules, run: statefulRun(o.skipStateful, run) }));
    },
    async call(evidence, operationId, req, ctx) {
      const res = await o.client.call(s.op(operationId), req, ctx.signal);
      evidence.push(res.exchange);
      return res;
    },
    expectOk(operationId, res, evidence, what) {
      const v = judgeSuccess(s.op(operationId), res, evidence);
      if (v.status === 'passed') return null;
      if (v.status === 'failed') return fail(`${what}: ${v.failure.message}`, v.failure.rule, evidence);
      throw new Unavailable(`${what}: ${v.status === 'not_implemented' ? v.reason : 'skipped'}`, evidence);
    },
  };
}
