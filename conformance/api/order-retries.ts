// Rules of POST /v2/orders retries that a byte-for-byte or body-keyed implementation breaks
// (the replay of the same body is api.rules.order-idempotency in stateful.ts):
// - a repeated Idempotency-Key with the same body in another JSON form (keys reordered,
//   white space changed, characters escaped) replays the first answer: the bodies are
//   compared as JSON, not as bytes;
// - without the header every request creates an order: two identical requests, two orders.
import { isDeepStrictEqual } from 'node:util';
import type { Check, CheckContext, CheckOutcome, Exchange, SpecRule } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import { applies, spell, BODY_FORMS } from '../core/forms.ts';
import type { BodyForm } from '../core/forms.ts';
import { subSeed } from '../core/seed.ts';
import type { ApiResponse } from '../core/openapi/client.ts';
import { statefulRun } from './checks.ts';
import { prepareRequest } from './fixtures.ts';
import { API, ORDER_IDEMPOTENCY_JSON_RULE, ORDER_WITHOUT_KEY_RULE } from './rules.ts';
import type { ApiRule } from './rules.ts';
import type { StatefulChecksOptions } from './stateful.ts';
import { fail, pass, skip } from '../core/outcome.ts';
import { judgeSuccess } from './verdict.ts';

/** The spellings a replay is sent in: the two the rule names, and escapes (also "the same JSON"). */
const REPLAY_FORMS: readonly BodyForm[] = ['key-order', 'whitespace', 'escapes'];

type Json = Record<string, unknown>;

export function orderRetryChecks(o: StatefulChecksOptions): Check[] {
  const s = o.state;
  if (!s.hasOp('createOrder')) return [];
  const op = s.op('createOrder');
  const check = (id: string, title: string, rule: ApiRule, run: (ctx: CheckContext, evidence: Exchange[]) => Promise<CheckOutcome>): Check =>
    defineCheck({ book: API, id: `rules.${id}`, title, group: 'stateful rules', rules: [rule], run: statefulRun(o.skipStateful, run) });
  const created = (res: ApiResponse, evidence: Exchange[], what: string, rule: SpecRule): CheckOutcome | null => {
    const verdict = judgeSuccess(op, res, evidence);
    if (verdict.status === 'passed') return null;
    if (verdict.status === 'failed') return fail(`${what}: ${verdict.failure.message}`, rule, evidence);
    return skip(`${what}: ${verdict.status === 'not_implemented' ? verdict.reason : 'skipped'}`);
  };
  const checks: Check[] = [];

  if (op.spec.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')) {
    checks.push(
      check('order-idempotency-json-form', 'POST /v2/orders: the same body in another JSON form (keys reordered, white space changed, escapes) with the same Idempotency-Key replays the first answer', ORDER_IDEMPOTENCY_JSON_RULE, async (ctx, evidence) => {
        const parts = await prepareRequest(s, op, 'idempotency/json-form', 'success');
        const auth = await s.authFor(op);
        const key = `conformance-json-${subSeed(ctx.seed, 'idempotency/json-form').toString(16)}-${Date.now().toString(36)}`;
        const headers = { ...parts.headers, 'idempotency-key': key };
        const first = await o.client.call(op, { auth, ...parts, headers, label: 'create with an Idempotency-Key (compact JSON)' }, ctx.signal);
        evidence.push(first.exchange);
        const bad = created(first, evidence, 'creating an order with an Idempotency-Key failed', ORDER_IDEMPOTENCY_JSON_RULE);
        if (bad) return bad;
        if (first.exchange.response.headers['idempotent-replayed'] !== undefined) return fail('the first request with a new Idempotency-Key answered Idempotent-Replayed: it is absent on the answer that creates the order', ORDER_IDEMPOTENCY_JSON_RULE, evidence);
        const tried: string[] = [];
        for (const form of REPLAY_FORMS.filter((f) => applies(parts.body, f))) {
          const again = await o.client.call(op, { auth, ...parts, headers, rawBody: { contentType: 'application/json', bytes: spell(parts.body, form) }, label: `the same body again, ${form}` }, ctx.signal);
          evidence.push(again.exchange);
          const problem = replayProblem(first, again);
          if (problem) return fail(`the same body sent ${BODY_FORMS[form]} ${problem}: the bodies are compared as JSON, not as bytes`, ORDER_IDEMPOTENCY_JSON_RULE, evidence);
          tried.push(form);
        }
        return pass([`replayed for ${tried.join(', ')}`]);
      }),
    );
  }

  checks.push(
    check('order-without-key-creates', 'POST /v2/orders without an Idempotency-Key: two identical requests create two orders', ORDER_WITHOUT_KEY_RULE, async (ctx, evidence) => {
      const parts = await prepareRequest(s, op, 'without-key', 'success');
      const auth = await s.authFor(op);
      const orders: string[] = [];
      for (const label of ['create an order without an Idempotency-Key', 'the identical request again']) {
        const res = await o.client.call(op, { auth, ...parts, label }, ctx.signal);
        evidence.push(res.exchange);
        const bad = created(res, evidence, `${label}: not created`, ORDER_WITHOUT_KEY_RULE);
        if (bad) return bad;
        if (res.exchange.response.headers['idempotent-replayed'] !== undefined) return fail(`${label} answered Idempotent-Replayed without an Idempotency-Key`, ORDER_WITHOUT_KEY_RULE, evidence);
        orders.push(String((res.json as Json).orderId));
      }
      if (orders[0] === orders[1]) return fail(`both requests answered the order ${orders[0]}: without the header every request creates an order`, ORDER_WITHOUT_KEY_RULE, evidence);
      return pass();
    }),
  );
  return checks;
}

/** Why `again` is not the replay of `first` (null when it is). */
function replayProblem(first: ApiResponse, again: ApiResponse): string | null {
  if (again.status !== first.status) return `answered ${again.status ?? again.exchange.response.error}, not the first answer's ${first.status}`;
  if (!isDeepStrictEqual(again.json, first.json)) return 'answered another body than the first answer (another order?)';
  const h = (r: ApiResponse, name: string): string | undefined => r.exchange.response.headers[name];
  if (h(again, 'location') !== h(first, 'location')) return `answered Location ${h(again, 'location')}, not the first answer's ${h(first, 'location')}`;
  if (h(again, 'idempotent-replayed') !== 'true') return 'answered without Idempotent-Replayed: true';
  return null;
}
