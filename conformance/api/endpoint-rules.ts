// The webhook endpoint rules left from issues 67 and 68, each on endpoints the check creates
// (disabled again at its end):
//   rules.endpoints.url-destination  a URL that breaks a destination rule gets 400
//                                    destination-not-allowed on POST and PATCH (the notifyUrl
//                                    check's cases); nothing is created or changed
//   rules.endpoints.edit-to-taken    a URL edit to the URL of another active endpoint gets 409
//                                    endpoint-exists; the endpoint is unchanged
//   rules.deliveries.endpoint-filter GET /v2/webhooks/deliveries?endpointId= lists that endpoint's
//                                    deliveries only (a test webhook to each of two endpoints)
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { answerRules } from '../core/contract-rules.ts';
import { MANAGEMENT_API } from '../core/coverage.ts';
import { defineCheck } from '../core/define.ts';
import type { ApiResponse } from '../core/openapi/client.ts';
import type { RequestParts } from '../core/openapi/requests.ts';
import { isObj } from '../core/openapi/schema.ts';
import { fail, pass } from '../core/outcome.ts';
import { endpointScope, type AddEndpoint } from './endpoints.ts';
import { REFUSED_DESTINATIONS } from './errors.ts';
import { API, DESTINATION_RULE, type ApiRule } from './rules.ts';
import type { StatefulChecksOptions } from './stateful.ts';
import { judgeProblem, judgeSuccess } from './verdict.ts';

const URL_RULE: ApiRule = {
  ...DESTINATION_RULE,
  covers: ['product#destinations', ...answerRules('createWebhookEndpoint', 400, 'destination-not-allowed'), ...answerRules('updateWebhookEndpoint', 400, 'destination-not-allowed')],
};

const EDIT_TAKEN_RULE: ApiRule = {
  source: `${MANAGEMENT_API}#/paths/~1v2~1webhooks~1endpoints~1{endpointId}/patch`,
  quote: 'A URL that another active endpoint of the environment has answers 409 (endpoint-exists). Nothing was changed.',
  covers: answerRules('updateWebhookEndpoint', 409, 'endpoint-exists'),
};

const FILTER_RULE: ApiRule = {
  source: `${MANAGEMENT_API}#/paths/~1v2~1webhooks~1deliveries/get`,
  quote: "endpointId narrows the page to one endpoint's deliveries (any version); it combines with q.",
  covers: ['listDeliveries#endpoint-filter'],
};

const NEEDS = ['createWebhookEndpoint', 'updateWebhookEndpoint', 'getWebhookEndpoint', 'listWebhookEndpoints', 'listDeliveries', 'sendTestWebhook'];

export function endpointRuleChecks(o: StatefulChecksOptions): Check[] {
  const s = o.state;
  if (!NEEDS.every((n) => s.hasOp(n))) return [];
  const scope = endpointScope(o);
  const call = async (evidence: Exchange[], operationId: string, parts: Partial<RequestParts>, label: string, ctx: CheckContext): Promise<ApiResponse> => {
    const res = await o.client.call(s.op(operationId), { auth: await s.managementAuth(), ...parts, label }, ctx.signal);
    evidence.push(res.exchange);
    return res;
  };
  /** An endpoint the check adds: its id and URL, or the outcome that ends the check. */
  const added = async (add: AddEndpoint, tag: string, rule: ApiRule, evidence: Exchange[]): Promise<{ id: string; url: string } | CheckOutcome> => {
    const res = await add(tag);
    const v = judgeSuccess(s.op('createWebhookEndpoint'), res, evidence);
    if (v.status !== 'passed' || !isObj(res.json)) return v.status === 'failed' ? fail(`an endpoint could not be created: ${v.failure.message}`, rule, evidence) : v;
    return { id: String(res.json.id), url: String(res.json.url) };
  };
  const unchanged = async (ctx: CheckContext, evidence: Exchange[], endpointId: string, before: ApiResponse, rule: ApiRule): Promise<CheckOutcome> => {
    const after = await call(evidence, 'getWebhookEndpoint', { path: { endpointId } }, 'the endpoint after the refusals', ctx);
    if (JSON.stringify(after.json) !== JSON.stringify(before.json)) return fail(`the refused edit changed the endpoint: ${before.exchange.response.body} became ${after.exchange.response.body}`, rule, evidence);
    return pass();
  };
  const check = (id: string, title: string, rule: ApiRule, run: Parameters<typeof scope>[0]): Check => defineCheck({ book: API, id, title, group: 'stateful rules', rules: [rule], run: scope(run) });

  return [
    check('rules.endpoints.url-destination', 'a webhook endpoint URL that breaks a destination rule gets 400 destination-not-allowed on POST and PATCH; nothing is created or changed', URL_RULE, async (ctx, evidence, add) => {
      const mine = await added(add, 'destination', URL_RULE, evidence);
      if ('status' in mine) return mine;
      const path = { endpointId: mine.id };
      const before = await call(evidence, 'getWebhookEndpoint', { path }, 'the endpoint before the refusals', ctx);
      for (const [url, what] of REFUSED_DESTINATIONS) {
        for (const [operationId, parts] of [['createWebhookEndpoint', { body: { url } }], ['updateWebhookEndpoint', { path, body: { url } }]] as const) {
          const res = await call(evidence, operationId, parts, `${operationId === 'createWebhookEndpoint' ? 'create an endpoint' : 'edit the URL'} with ${what}`, ctx);
          const v = judgeProblem(s.op(operationId), res, { status: 400, slug: 'destination-not-allowed' }, URL_RULE, evidence);
          if (v.status !== 'passed') return v.status === 'failed' ? fail(`${url} (${what}): ${v.failure.message}`, v.failure.rule, evidence) : v;
        }
      }
      const list = await call(evidence, 'listWebhookEndpoints', {}, 'no endpoint has a refused URL', ctx);
      const data = isObj(list.json) && Array.isArray(list.json.data) ? list.json.data : [];
      const refused = new Set(REFUSED_DESTINATIONS.map(([url]) => url));
      const written = data.find((e) => isObj(e) && refused.has(String(e.url)));
      if (isObj(written)) return fail(`a refused URL was written: endpoint ${String(written.id)} has ${String(written.url)}`, URL_RULE, evidence);
      return unchanged(ctx, evidence, mine.id, before, URL_RULE);
    }),

    check('rules.endpoints.edit-to-taken', 'a URL edit to the URL of another active endpoint gets 409 endpoint-exists; the endpoint is unchanged', EDIT_TAKEN_RULE, async (ctx, evidence, add) => {
      const first = await added(add, 'taken-a', EDIT_TAKEN_RULE, evidence);
      if ('status' in first) return first;
      const second = await added(add, 'taken-b', EDIT_TAKEN_RULE, evidence);
      if ('status' in second) return second;
      const path = { endpointId: second.id };
      const before = await call(evidence, 'getWebhookEndpoint', { path }, 'the second endpoint', ctx);
      const res = await call(evidence, 'updateWebhookEndpoint', { path, body: { url: first.url } }, "edit its URL to the first endpoint's", ctx);
      const v = judgeProblem(s.op('updateWebhookEndpoint'), res, { status: 409, slug: 'endpoint-exists' }, EDIT_TAKEN_RULE, evidence);
      return v.status === 'passed' ? unchanged(ctx, evidence, second.id, before, EDIT_TAKEN_RULE) : v;
    }),

    check('rules.deliveries.endpoint-filter', "GET /v2/webhooks/deliveries?endpointId= lists that endpoint's deliveries only", FILTER_RULE, async (ctx, evidence, add) => {
      const tested: string[] = [];
      for (const tag of ['filter-a', 'filter-b']) {
        const e = await added(add, tag, FILTER_RULE, evidence);
        if ('status' in e) return e;
        const sent = await call(evidence, 'sendTestWebhook', { path: { endpointId: e.id } }, `a test webhook to ${tag}`, ctx);
        const v = judgeSuccess(s.op('sendTestWebhook'), sent, evidence);
        if (v.status !== 'passed' || !isObj(sent.json)) return v.status === 'failed' ? fail(`a test webhook could not be sent: ${v.failure.message}`, FILTER_RULE, evidence) : v;
        tested.push(e.id, String(sent.json.id));
      }
      const [endpointId, deliveryId] = tested as [string, string];
      const page = await call(evidence, 'listDeliveries', { query: { endpointId, limit: '100' } }, 'the deliveries of the first endpoint', ctx);
      const data = isObj(page.json) && Array.isArray(page.json.data) ? page.json.data : [];
      const foreign = data.find((d) => !isObj(d) || d.endpointId !== endpointId);
      if (foreign !== undefined) return fail(`?endpointId=${endpointId} listed a delivery of another endpoint: ${JSON.stringify(foreign).slice(0, 300)}`, FILTER_RULE, evidence);
      if (!data.some((d) => isObj(d) && d.id === deliveryId)) return fail(`?endpointId=${endpointId} did not list its test delivery ${deliveryId}`, FILTER_RULE, evidence);
      return pass();
    }),
  ];
}
