// Several endpoints per environment, each with its event types (issue 68), from the API's side:
//   rules.endpoints.limit         creating endpoints up to the limit (WebhookEndpointList
//                                 x-max-active, 16) succeeds; one more is 409 endpoint-limit-reached
//   rules.endpoints.unknown-type  an eventTypes entry that is not an order event type is 422
//                                 unknown-event-type naming its pointer, by POST and PATCH; nothing changes
//   rules.endpoints.independent   a change of one endpoint's eventTypes leaves another endpoint as it was
// Every endpoint a check adds is disabled at its end. (Isolation between tenants: strict.ts.)
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import type { ApiResponse } from '../core/openapi/client.ts';
import { isObj } from '../core/openapi/schema.ts';
import { fail, pass } from '../core/outcome.ts';
import { MANAGEMENT_API } from '../core/coverage.ts';
import { MAX_ACTIVE_ENDPOINTS } from '../../generated/vocabulary.ts';
import { statefulRun } from './checks.ts';
import { answerRules } from '../core/contract-rules.ts';
import { API, type ApiRule } from './rules.ts';
import type { StatefulChecksOptions } from './stateful.ts';
import { judgeProblem, judgeSuccess } from './verdict.ts';

const LIMIT_RULE: ApiRule = {
  covers: ['createWebhookEndpoint#endpoint-limit', ...answerRules('createWebhookEndpoint', 409, 'endpoint-limit-reached')],
  source: `${MANAGEMENT_API}#/paths/~1v2~1webhooks~1endpoints/post`,
  quote: 'An environment has at most 16 active endpoints (WebhookEndpointList x-max-active); one more answers 409 (endpoint-limit-reached).',
};

const EVENT_TYPES_RULE: ApiRule = {
  covers: [
    'createWebhookEndpoint#event-types-known',
    'updateWebhookEndpoint#event-types-known',
    ...answerRules('createWebhookEndpoint', 422, 'unknown-event-type'),
    ...answerRules('updateWebhookEndpoint', 422, 'unknown-event-type'),
  ],
  source: `${MANAGEMENT_API}#/components/schemas/WebhookEventTypes`,
  quote: 'Each is the name of an order event message of webhooks.asyncapi.yaml; any other answers 422 (unknown-event-type) with its pointer in errors.',
};

const EDIT_VERSION_RULE: ApiRule = {
  covers: ['updateWebhookEndpoint#event-types-edit-version'],
  source: `${MANAGEMENT_API}#/paths/~1v2~1webhooks~1endpoints~1{endpointId}/patch`,
  quote: "A change of eventTypes increases this endpoint's version by one; other endpoints are not touched.",
};

type Json = Record<string, unknown>;

/** Creates an endpoint of the check at the --webhook-url with `/<tag>` added; answers the creation. */
export type AddEndpoint = (tag: string, extra?: Json) => Promise<ApiResponse>;

/** Wraps a check's run with a helper that creates endpoints, each disabled again at its end. */
export function endpointScope(o: Pick<StatefulChecksOptions, 'state' | 'client' | 'skipStateful'>) {
  const s = o.state;
  return (run: (ctx: CheckContext, evidence: Exchange[], add: AddEndpoint) => Promise<CheckOutcome>) =>
    statefulRun(o.skipStateful, async (ctx, evidence) => {
      await s.endpoint();
      const auth = await s.managementAuth();
      const made: string[] = [];
      const add: AddEndpoint = async (tag, extra = {}) => {
        const url = `${s.webhookUrl().replace(/\/+$/, '')}/${tag}-${ctx.seed.toString(36)}`;
        const res = await o.client.call(s.op('createWebhookEndpoint'), { auth, body: { url, ...extra }, label: `create the endpoint ${tag}` }, ctx.signal);
        evidence.push(res.exchange);
        if (res.status === 201 && isObj(res.json)) made.push(String(res.json.id));
        return res;
      };
      try {
        return await run(ctx, evidence, add);
      } finally {
        for (const endpointId of made) {
          evidence.push((await o.client.call(s.op('updateWebhookEndpoint'), { auth, path: { endpointId }, body: { active: false }, label: 'disable an endpoint the check added' }, ctx.signal)).exchange);
        }
      }
    });
}

export function endpointChecks(o: StatefulChecksOptions): Check[] {
  const s = o.state;
  if (!s.hasOp('createWebhookEndpoint') || !s.hasOp('updateWebhookEndpoint') || !s.hasOp('listWebhookEndpoints')) return [];
  const create = s.op('createWebhookEndpoint');
  const update = s.op('updateWebhookEndpoint');
  const list = s.op('listWebhookEndpoints');
  const limit = MAX_ACTIVE_ENDPOINTS;
  const withEndpoints = endpointScope(o);

  const activeCount = async (ctx: CheckContext, evidence: Exchange[]): Promise<number> => {
    const res = await o.client.call(list, { auth: await s.managementAuth(), label: 'list the endpoints' }, ctx.signal);
    evidence.push(res.exchange);
    const data = isObj(res.json) && Array.isArray(res.json.data) ? res.json.data : [];
    return data.filter((e) => isObj(e) && e.active === true).length;
  };

  const check = (id: string, title: string, rule: ApiRule, run: Parameters<typeof withEndpoints>[0]): Check =>
    defineCheck({ book: API, id: `rules.endpoints.${id}`, title, group: 'stateful rules', rules: [rule], run: withEndpoints(run) });

  return [
    check('limit', `POST /v2/webhooks/endpoints up to ${limit} active endpoints succeeds; one more gets 409 endpoint-limit-reached`, LIMIT_RULE, async (ctx, evidence, add) => {
      const free = limit - (await activeCount(ctx, evidence));
      for (let i = 0; i < free; i++) {
        const res = await add(`limit-${i}`);
        const v = judgeSuccess(create, res);
        if (v.status !== 'passed') return fail(`endpoint ${limit - free + i + 1} of ${limit} was refused: ${res.status ?? 'no answer'}`, LIMIT_RULE, evidence);
      }
      return judgeProblem(create, await add('limit-over'), { status: 409, slug: 'endpoint-limit-reached' }, LIMIT_RULE, evidence);
    }),

    check('unknown-type', 'eventTypes with a type that is not an order event gets 422 unknown-event-type naming its pointer, by POST and PATCH; nothing changes', EVENT_TYPES_RULE, async (ctx, evidence, add) => {
      const before = await activeCount(ctx, evidence);
      const v = judgeProblem(create, await add('unknown-type', { eventTypes: ['order.paid', 'order.refunded'] }), { status: 422, slug: 'unknown-event-type', pointer: '/body/eventTypes/1' }, EVENT_TYPES_RULE, evidence);
      if (v.status !== 'passed') return v;
      if ((await activeCount(ctx, evidence)) !== before) return fail('the refused creation still created an endpoint', EVENT_TYPES_RULE, evidence);
      const made = await add('known-type', { eventTypes: ['order.paid'] });
      if (made.status !== 201 || !isObj(made.json)) return fail(`an endpoint with eventTypes [order.paid] was refused: ${made.status ?? 'no answer'}`, EVENT_TYPES_RULE, evidence);
      const endpointId = String(made.json.id);
      const res = await o.client.call(update, { auth: await s.managementAuth(), path: { endpointId }, body: { eventTypes: ['webhook.test'] }, label: 'PATCH eventTypes [webhook.test]' }, ctx.signal);
      evidence.push(res.exchange);
      return judgeProblem(update, res, { status: 422, slug: 'unknown-event-type', pointer: '/body/eventTypes/0' }, EVENT_TYPES_RULE, evidence);
    }),

    check('independent', "a change of one endpoint's eventTypes raises its version and leaves another endpoint as it was", EDIT_VERSION_RULE, async (ctx, evidence, add) => {
      const [a, b] = [await add('independent-a', { eventTypes: ['order.paid'] }), await add('independent-b', { eventTypes: ['order.created'] })];
      if (!isObj(a.json) || !isObj(b.json) || a.status !== 201 || b.status !== 201) return fail('two endpoints with eventTypes could not be created', EDIT_VERSION_RULE, evidence);
      const auth = await s.managementAuth();
      const changed = await o.client.call(update, { auth, path: { endpointId: String(a.json.id) }, body: { eventTypes: ['order.paid', 'order.payment_review_required'] }, label: 'change the first endpoint’s eventTypes' }, ctx.signal);
      evidence.push(changed.exchange);
      if (!isObj(changed.json) || changed.json.version !== Number(a.json.version) + 1) return fail(`a change of eventTypes answered version ${isObj(changed.json) ? String(changed.json.version) : '?'}; it raises the version by one`, EDIT_VERSION_RULE, evidence);
      const read = await o.client.call(s.op('getWebhookEndpoint'), { auth, path: { endpointId: String(b.json.id) }, label: 'read the other endpoint' }, ctx.signal);
      evidence.push(read.exchange);
      const other = isObj(read.json) ? read.json : {};
      if (other.version !== b.json.version || JSON.stringify(other.eventTypes) !== JSON.stringify(['order.created'])) {
        return fail(`the other endpoint changed: version ${String(other.version)}, eventTypes ${JSON.stringify(other.eventTypes)}`, EDIT_VERSION_RULE, evidence);
      }
      return pass();
    }),
  ];
}
