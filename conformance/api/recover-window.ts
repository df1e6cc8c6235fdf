// POST /v2/webhooks/endpoints/{endpointId}/recover refuses a window whose `until` is not later
// than `since` (management#recover-window): 400 validation-failed naming /body/until, nothing
// recovered. The schema cannot say it (two valid date-times), so the schema-derived invalid
// requests never send it: an implementation that answers 202 with nothing recovered passes them.
import type { Check } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import { pass } from '../core/outcome.ts';
import { statefulRun } from './checks.ts';
import { API, RECOVER_WINDOW_RULE } from './rules.ts';
import type { StatefulChecksOptions } from './stateful.ts';
import { judgeProblem } from './verdict.ts';

const RECOVER_OP = 'recoverDeliveries';

export function recoverWindowChecks(o: StatefulChecksOptions): Check[] {
  const s = o.state;
  if (!s.hasOp(RECOVER_OP)) return [];
  const op = s.op(RECOVER_OP);
  return [
    defineCheck({
      book: API,
      id: 'rules.recover.until-after-since',
      title: 'POST /v2/webhooks/endpoints/{endpointId}/recover with until equal to since, and before it: 400 validation-failed naming /body/until',
      group: 'stateful rules',
      rules: [RECOVER_WINDOW_RULE],
      run: statefulRun(o.skipStateful, async (ctx, evidence) => {
        const endpointId = (await s.endpoint()).id;
        const auth = await s.managementAuth();
        const since = new Date(Date.now() - 3_600_000);
        for (const [what, until] of [['equal to since', since], ['before since', new Date(since.getTime() - 1_000)]] as const) {
          const res = await o.client.call(op, { auth, path: { endpointId }, body: { since: since.toISOString(), until: until.toISOString(), include: 'all' }, label: `recover with until ${what}` }, ctx.signal);
          evidence.push(res.exchange);
          const verdict = judgeProblem(op, res, { status: 400, slug: 'validation-failed', pointer: '/body/until' }, RECOVER_WINDOW_RULE, evidence);
          if (verdict.status !== 'passed') return verdict;
        }
        return pass();
      }),
    }),
  ];
}
