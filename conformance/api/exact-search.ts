// Exact search (issue 67): GET /v2/webhooks/deliveries documents `q` as an exact match (no
// prefix or partial match; no match is an empty page). The check searches a test webhook's
// event id whole (found) and cut by one character at either end (an empty page each).
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import type { ApiClient, ApiResponse } from '../core/openapi/client.ts';
import { isObj } from '../core/openapi/schema.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { fail, pass } from '../core/outcome.ts';
import { statefulRun } from './checks.ts';
import { API, type ApiRule } from './rules.ts';
import type { ApiState } from './state.ts';

const EXACT_SEARCH_RULE: ApiRule = {
  covers: ['listDeliveries#exact-search'],
  source: 'management.openapi.yaml#/paths/~1v2~1webhooks~1deliveries/get',
  quote: 'q searches by exact match on an order id, a merchant reference or an event id (no prefix or partial match); no match is an empty page.',
};

/** The event ids of a page of deliveries, or null when the answer is no page. */
const eventIds = (res: ApiResponse): string[] | null => {
  const data = isObj(res.json) ? res.json.data : undefined;
  return res.status === 200 && Array.isArray(data) ? data.map((d) => String(isObj(d) ? d.eventId : '')) : null;
};

export function exactSearchChecks(o: { state: ApiState; client: ApiClient; skipStateful: boolean }): Check[] {
  const s = o.state;
  if (!s.hasOp('listDeliveries') || !s.hasOp('sendTestWebhook')) return [];
  const run = async (ctx: CheckContext, evidence: Exchange[]): Promise<CheckOutcome> => {
    const endpointId = (await s.endpoint()).id;
    const test = await s.create('sendTestWebhook', 'send a test webhook to search for', (p) => ({ ...p, path: { ...p.path, endpointId } }));
    evidence.push(test.res.exchange);
    const eventId = String(test.json.eventId);
    const op = s.op('listDeliveries');
    const auth = await s.managementAuth();
    const search = async (q: string, label: string): Promise<ApiResponse> => {
      const res = await o.client.call(op, { auth, query: { q, limit: '100' }, label }, ctx.signal);
      evidence.push(res.exchange);
      return res;
    };
    const whole = await search(eventId, 'q = the whole event id');
    if (!eventIds(whole)?.includes(eventId)) return fail(`q = the event id ${eventId} of a test webhook just sent was answered ${describeAnswer(whole)} without its delivery`, EXACT_SEARCH_RULE, evidence);
    for (const [q, what] of [
      [eventId.slice(0, -1), 'the event id without its last character'],
      [eventId.slice(1), 'the event id without its first character'],
    ] as const) {
      const found = eventIds(await search(q, `q = ${what}`));
      if (found === null) return fail(`q = ${what} was not answered a page of deliveries`, EXACT_SEARCH_RULE, evidence);
      if (found.length > 0) return fail(`q = ${what} (${q}) found ${found.length} deliveries (${found.slice(0, 3).join(', ')}): the search is exact, no prefix or partial match; no match is an empty page`, EXACT_SEARCH_RULE, evidence);
    }
    return pass();
  };
  return [
    defineCheck({
      book: API,
      id: 'rules.search.deliveries-exact',
      title: 'GET /v2/webhooks/deliveries?q= finds a test webhook by its whole event id, and nothing by the id cut by one character at either end',
      group: 'stateful rules',
      rules: [EXACT_SEARCH_RULE],
      run: statefulRun(o.skipStateful, run),
    }),
  ];
}
