// A lost commit, rehearsed (product#outcome-unknown, product#store-unavailable): the sandbox's
// write fault (POST /sandbox/faults/next-write, test environments) makes the next write commit
// and answer 504 outcome-unknown, or answer 503 store-unavailable having written nothing. The
// checks then send the same request again and judge that it settles the outcome:
// - lost-commit.order: the same Idempotency-Key replays the stored order; one order in all;
// - lost-commit.payout: the same thirdPartyId answers 409 naming the stored payout; one payout;
// - store-unavailable.nothing-written: the same Idempotency-Key creates the order (no replay).
// An implementation without the sandbox operation gets these checks not reached, with that
// reason: a black box cannot be made to lose a commit otherwise.
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import { fail, pass, skip } from '../core/outcome.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import type { ApiResponse } from '../core/openapi/client.ts';
import type { RequestParts } from '../core/openapi/requests.ts';
import { subSeed } from '../core/seed.ts';
import { statefulRun } from './checks.ts';
import { prepareRequest } from './fixtures.ts';
import { API, LOST_COMMIT_RULE, STORE_UNAVAILABLE_RULE, answerRule, type ApiRule } from './rules.ts';
import type { StatefulChecksOptions } from './stateful.ts';
import { routeMissing } from './verdict.ts';

const FAULT_OP = 'injectSandboxWriteFault';
type Fault = 'outcome-unknown' | 'store-unavailable' | 'none';
type Json = Record<string, unknown>;

export function lostCommitChecks(o: StatefulChecksOptions): Check[] {
  const s = o.state;
  // `status`: the answered status the check judges (with Retry-After present), not yet the problem body: issue 67.
  const check = (id: string, title: string, rule: ApiRule, run: (ctx: CheckContext, evidence: Exchange[]) => Promise<CheckOutcome>, status: ApiRule): Check =>
    defineCheck({ book: API, id: `rules.${id}`, title, group: 'stateful rules', rules: [rule, status], run: statefulRun(o.skipStateful, (ctx, evidence) => armed(ctx, evidence, run)) });

  /** Sends `fault` for the next write; a reason the check is not reached, or null once armed. */
  async function arm(fault: Fault, ctx: CheckContext, evidence: Exchange[]): Promise<string | null> {
    if (!s.hasOp(FAULT_OP)) return `the contract bundled with the suite has no ${FAULT_OP}: a lost commit cannot be provoked`;
    const op = s.op(FAULT_OP);
    const res = await o.client.call(op, { auth: await s.authFor(op), body: { fault }, label: `arm ${fault} for the next write (sandbox)` }, ctx.signal);
    evidence.push(res.exchange);
    const missing = routeMissing(res);
    if (missing) return `the implementation does not offer the sandbox write fault (POST /sandbox/faults/next-write ${missing}): a lost commit cannot be provoked against a black box, so the retry after it is not checked`;
    if (res.status !== 200) throw new ArmRefused(`arming ${fault} was answered ${describeAnswer(res)}`);
    return null;
  }

  /** Runs a check whose first step arms a fault, and always disarms after it (the run's other writes stay clean). */
  async function armed(ctx: CheckContext, evidence: Exchange[], run: (ctx: CheckContext, evidence: Exchange[]) => Promise<CheckOutcome>): Promise<CheckOutcome> {
    try {
      return await run(ctx, evidence);
    } catch (err) {
      if (err instanceof ArmRefused) return fail(err.message, LOST_COMMIT_RULE, evidence);
      throw err;
    } finally {
      if (s.hasOp(FAULT_OP)) await arm('none', ctx, []).catch(() => undefined);
    }
  }

  /** A createOrder request with a unique merchantReference and a new Idempotency-Key. */
  async function orderRequest(ctx: CheckContext, label: string): Promise<{ parts: RequestParts; reference: string }> {
    const op = s.op('createOrder');
    const parts = await prepareRequest(s, op, label, 'success');
    const unique = `${subSeed(ctx.seed, label).toString(36)}-${Date.now().toString(36)}`;
    const reference = `conformance-${label.replace(/\W+/g, '-')}-${unique}`.slice(0, 64);
    return { parts: { ...parts, headers: { ...parts.headers, 'idempotency-key': `conformance-${unique}` }, body: { ...(parts.body as Json), merchantReference: reference } }, reference };
  }

  const sendOrder = async (ctx: CheckContext, parts: RequestParts, label: string, evidence: Exchange[]): Promise<ApiResponse> => {
    const op = s.op('createOrder');
    const res = await o.client.call(op, { auth: await s.authFor(op), ...parts, label }, ctx.signal);
    evidence.push(res.exchange);
    return res;
  };

  /** How many order.created events carry `reference` (GET /v2/events). */
  async function ordersWith(ctx: CheckContext, reference: string, evidence: Exchange[]): Promise<number> {
    const op = s.op('listEvents');
    const res = await o.client.call(op, { auth: await s.authFor(op), query: { type: 'order.created', limit: '100' }, label: 'list the order.created events' }, ctx.signal);
    evidence.push(res.exchange);
    const data = (res.json as { data?: Array<{ data?: { merchantReference?: unknown } }> } | undefined)?.data ?? [];
    return data.filter((e) => e.data?.merchantReference === reference).length;
  }

  const outcomeOf = (res: ApiResponse, slug: string, status: number): string | null => {
    const type = (res.json as { type?: unknown } | undefined)?.type;
    if (res.status !== status || typeof type !== 'string' || !type.endsWith(`/${slug}`)) return `answered ${describeAnswer(res)}, not ${status} ${slug}`;
    if (res.exchange.response.headers['retry-after'] === undefined) return `answered ${status} ${slug} without Retry-After`;
    return null;
  };

  const checks: Check[] = [];
  if (s.hasOp('createOrder') && s.hasOp('listEvents')) {
    checks.push(
      check('lost-commit.order', 'POST /v2/orders after a lost commit (504 outcome-unknown, sandbox fault): the same Idempotency-Key replays the stored order, one order in all', LOST_COMMIT_RULE, async (ctx, evidence) => {
        const why = await arm('outcome-unknown', ctx, evidence);
        if (why) return skip(why);
        const { parts, reference } = await orderRequest(ctx, 'lost-commit/order');
        const lost = await sendOrder(ctx, parts, 'create an order (its commit is lost)', evidence);
        const not504 = outcomeOf(lost, 'outcome-unknown', 504);
        if (not504) return fail(`with outcome-unknown armed, the next write ${not504}`, LOST_COMMIT_RULE, evidence);
        const retry = await sendOrder(ctx, parts, 'the same request again (same Idempotency-Key)', evidence);
        if (retry.status !== 201 || retry.exchange.response.headers['idempotent-replayed'] !== 'true') {
          return fail(`the retry after the 504 ${describeRetry(retry)}: the order was stored, so the same Idempotency-Key replays it (201, Idempotent-Replayed: true)`, LOST_COMMIT_RULE, evidence);
        }
        const count = await ordersWith(ctx, reference, evidence);
        if (count !== 1) return fail(`GET /v2/events lists ${count} order.created events for merchantReference ${reference}: the lost commit and its retry are one order`, LOST_COMMIT_RULE, evidence);
        return pass([`order ${String((retry.json as Json).orderId)} replayed`]);
      }, answerRule('createOrder', 504)),
      check('store-unavailable.nothing-written', 'POST /v2/orders answered 503 store-unavailable (sandbox fault): nothing was written, so the same Idempotency-Key creates the order', STORE_UNAVAILABLE_RULE, async (ctx, evidence) => {
        const why = await arm('store-unavailable', ctx, evidence);
        if (why) return skip(why);
        const { parts, reference } = await orderRequest(ctx, 'store-unavailable/order');
        const refused = await sendOrder(ctx, parts, 'create an order (the store is unavailable)', evidence);
        const not503 = outcomeOf(refused, 'store-unavailable', 503);
        if (not503) return fail(`with store-unavailable armed, the next write ${not503}`, STORE_UNAVAILABLE_RULE, evidence);
        const retry = await sendOrder(ctx, parts, 'the same request again (same Idempotency-Key)', evidence);
        if (retry.status !== 201 || retry.exchange.response.headers['idempotent-replayed'] !== undefined) {
          return fail(`the retry after the 503 ${describeRetry(retry)}: nothing was written, so it creates the order (201 without Idempotent-Replayed)`, STORE_UNAVAILABLE_RULE, evidence);
        }
        const count = await ordersWith(ctx, reference, evidence);
        if (count !== 1) return fail(`GET /v2/events lists ${count} order.created events for merchantReference ${reference}, not one`, STORE_UNAVAILABLE_RULE, evidence);
        return pass();
      }, answerRule('createOrder', 503)),
    );
  }
  if (s.hasOp('createPayout') && s.hasOp('listUserTransactions')) {
    checks.push(
      check('lost-commit.payout', 'POST /transactions/payout after a lost commit (504 outcome-unknown, sandbox fault): the same thirdPartyId answers 409 naming the stored payout, one payout in all', LOST_COMMIT_RULE, async (ctx, evidence) => {
        const why = await arm('outcome-unknown', ctx, evidence);
        if (why) return skip(why);
        const op = s.op('createPayout');
        const parts = await prepareRequest(s, op, 'lost-commit/payout', 'success');
        const userId = `conformance-lost-${subSeed(ctx.seed, 'lost-commit/payout').toString(36)}-${Date.now().toString(36)}`;
        const request = { ...parts, body: { ...(parts.body as Json), userId } };
        const auth = await s.authFor(op);
        const lost = await o.client.call(op, { auth, ...request, label: 'create a payout (its commit is lost)' }, ctx.signal);
        evidence.push(lost.exchange);
        const not504 = outcomeOf(lost, 'outcome-unknown', 504);
        if (not504) return fail(`with outcome-unknown armed, the next write ${not504}`, LOST_COMMIT_RULE, evidence);
        const retry = await o.client.call(op, { auth, ...request, label: 'the same request again (same thirdPartyId)' }, ctx.signal);
        evidence.push(retry.exchange);
        const existing = (retry.json as { existingTransactionId?: unknown } | undefined)?.existingTransactionId;
        if (retry.status !== 409 || typeof existing !== 'string') return fail(`the retry after the 504 ${describeRetry(retry)}: the payout was stored, so the same thirdPartyId answers 409 with existingTransactionId`, LOST_COMMIT_RULE, evidence);
        const list = s.op('listUserTransactions');
        const listParts = await prepareRequest(s, list, 'lost-commit/list', 'negative');
        const listed = await o.client.call(list, { auth: await s.authFor(list), ...listParts, query: { userId }, label: "list the user's transactions" }, ctx.signal);
        evidence.push(listed.exchange);
        const records = Array.isArray(listed.json) ? listed.json : ((listed.json as { data?: unknown } | undefined)?.data as unknown[] | undefined) ?? [];
        if (records.length !== 1) return fail(`GET /transactions/users lists ${records.length} transactions for the user: the lost commit and its retry are one payout`, LOST_COMMIT_RULE, evidence);
        return pass([`payout ${existing} named by the 409`]);
      }, answerRule('createPayout', 504)),
    );
  }
  return checks;
}

class ArmRefused extends Error {}

function describeRetry(res: ApiResponse): string {
  const replayed = res.exchange.response.headers['idempotent-replayed'];
  return `was answered ${describeAnswer(res)}${replayed === undefined ? ' without Idempotent-Replayed' : `, Idempotent-Replayed: ${replayed}`}`;
}
