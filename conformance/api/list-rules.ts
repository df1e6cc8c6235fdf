// Round seven of the api checks: the listing rules left without an id (issue 67).
// - GET /v2/events?type= lists only events of that type (and the new order's order.created);
// - GET /v2/events refuses a cursor it did not issue: 400 validation-failed;
// - GET /v2/orders/{orderId}/payments lists every deposit, verified or not, oldest first;
// - GET /transactions?orderNumber= answers the most recent of several matching payments.
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { subSeed } from '../core/seed.ts';
import type { ApiClient, ApiResponse, Auth, KeyCredentials } from '../core/openapi/client.ts';
import { isObj } from '../core/openapi/schema.ts';
import { fail, pass } from '../core/outcome.ts';
import { ruleKit } from './rule-kit.ts';
import { judgeProblem } from './verdict.ts';
import type { ApiState } from './state.ts';
import { EVENTS_FOREIGN_CURSOR_RULE, EVENTS_TYPE_FILTER_RULE, ORDER_PAYMENTS_OLDEST_FIRST_RULE, SEARCH_MOST_RECENT_RULE } from './rules.ts';

type Json = Record<string, unknown>;

/** A pause between two deposits, so that their createdAt (createdDate) differ. */
const CREATION_GAP_MS = 20;
/** The base64url of "forged-cursor": shaped like an opaque cursor (the parameter's pattern), issued by no one. */
const FORGED_CURSOR = Buffer.from('forged-cursor', 'utf8').toString('base64url');

export function listRuleChecks(o: { state: ApiState; client: ApiClient; creds: KeyCredentials; skipStateful: boolean }): Check[] {
  const s = o.state;
  const key: Auth = s.keyAuth();
  const { checks, check, call, expectOk } = ruleKit(o);
  const dataOf = (res: ApiResponse): Json[] => (isObj(res.json) && Array.isArray(res.json.data) ? res.json.data.filter(isObj) : []);
  const listEvents = (evidence: Exchange[], ctx: CheckContext, query: Record<string, string>, label: string): Promise<ApiResponse> =>
    call(evidence, 'listEvents', { auth: key, query, label }, ctx);

  /** An open order with two deposits, the first unverified, the second verified, created one after the other. */
  const orderWithTwoDeposits = async (evidence: Exchange[], ctx: CheckContext, label: string): Promise<{ orderId: string; orderNumber: string; txHashes: [string, string] } | CheckOutcome> => {
    await s.sandbox();
    const order = await s.order(true);
    const stamp = `${subSeed(ctx.seed, label).toString(16).padStart(8, '0')}${Date.now().toString(16)}`;
    const txHashes: [string, string] = [`0x${stamp}a1${'7c'.repeat(20)}`, `0x${stamp}b2${'7c'.repeat(20)}`];
    for (const [i, txHash] of txHashes.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, CREATION_GAP_MS));
      const verified = i > 0;
      const dep = await call(evidence, 'createSandboxDeposit', { auth: key, path: { orderId: order.orderId }, body: { amountBaseUnits: String(1000 + i), verified, txHash }, label: `deposit ${i + 1} of 2 (${verified ? 'verified' : 'unverified'}, txHash ${txHash})` }, ctx);
      const bad = expectOk('createSandboxDeposit', dep, evidence, `deposit ${i + 1} failed`);
      if (bad) return bad;
    }
    return { orderId: order.orderId, orderNumber: order.orderNumber, txHashes };
  };

  // ---- the event feed's type filter ------------------------------------------------------------
  check('events.type-filter', "GET /v2/events?type= lists only events of that type: after a new order, type=order.created lists its order.created, and type=order.paid lists no other type", [EVENTS_TYPE_FILTER_RULE], ['listEvents', 'createOrder'], async (ctx, evidence) => {
    await s.sandbox();
    const order = await s.order(true);
    for (const type of ['order.created', 'order.paid'] as const) {
      const res = await listEvents(evidence, ctx, { type, limit: '100' }, `the newest events of type ${type}`);
      const bad = expectOk('listEvents', res, evidence, `GET /v2/events?type=${type} failed`);
      if (bad) return bad;
      const other = dataOf(res).filter((e) => e.type !== type);
      if (other.length > 0) {
        const types = [...new Set(other.map((e) => String(e.type)))];
        return fail(`GET /v2/events?type=${type} listed ${other.length} event(s) of another type (${types.join(', ')}; the first: ${String(other[0]!.id)}): only events of this type are listed`, EVENTS_TYPE_FILTER_RULE, evidence);
      }
      if (type === 'order.created' && !dataOf(res).some((e) => isObj(e.data) && e.data.orderId === order.orderId)) {
        return fail(`GET /v2/events?type=order.created does not list the order.created of the order ${order.orderId} just created`, EVENTS_TYPE_FILTER_RULE, evidence);
      }
    }
    return pass();
  });

  // ---- the event feed refuses a cursor it did not issue ----------------------------------------
  check('events.foreign-cursor', `GET /v2/events with a cursor it did not issue (a forged one, ${FORGED_CURSOR}, and an issued nextCursor with a character added) is refused 400 validation-failed`, [EVENTS_FOREIGN_CURSOR_RULE], ['listEvents', 'createOrder'], async (ctx, evidence) => {
    await s.sandbox();
    for (let i = 0; i < 2; i++) await s.order(true);
    const first = await listEvents(evidence, ctx, { limit: '1' }, 'a page of one event, for an issued cursor');
    const bad = expectOk('listEvents', first, evidence, 'GET /v2/events?limit=1 failed');
    if (bad) return bad;
    const issued = isObj(first.json) && typeof first.json.nextCursor === 'string' ? first.json.nextCursor : null;
    if (issued === null) return fail('GET /v2/events?limit=1 after two new orders answered no nextCursor: older events remain', EVENTS_FOREIGN_CURSOR_RULE, evidence);
    const cursors: Array<[string, string]> = [
      [FORGED_CURSOR, `a forged cursor (${FORGED_CURSOR}, the base64url of "forged-cursor")`],
      [`${issued}A`, `the issued nextCursor ${issued} with "A" added`],
    ];
    // Another list's cursor, when the environment has deliveries enough for one (the run's orders to its endpoints).
    if (s.hasOp('listDeliveries')) {
      const deliveries = await call(evidence, 'listDeliveries', { auth: key, query: { limit: '1' }, label: "a page of one delivery, for another list's cursor" }, ctx);
      const other = deliveries.status === 200 && isObj(deliveries.json) && typeof deliveries.json.nextCursor === 'string' ? deliveries.json.nextCursor : null;
      if (other !== null) cursors.push([other, `the nextCursor GET /v2/webhooks/deliveries issued (${other})`]);
    }
    for (const [cursor, what] of cursors) {
      const res = await listEvents(evidence, ctx, { cursor, limit: '1' }, what);
      if (res.status !== null && res.status >= 200 && res.status < 300) {
        return fail(`GET /v2/events with ${what} was answered ${res.status} with ${dataOf(res).length} event(s): a cursor this operation did not issue answers 400`, EVENTS_FOREIGN_CURSOR_RULE, evidence);
      }
      const v = judgeProblem(s.op('listEvents'), res, { status: 400, slug: 'validation-failed' }, EVENTS_FOREIGN_CURSOR_RULE, evidence);
      if (v.status !== 'passed') return v;
    }
    return pass();
  });

  // ---- an order's payments, oldest first -------------------------------------------------------
  check('order-payments.oldest-first', "GET /v2/orders/{orderId}/payments lists an order's two deposits (unverified, then verified) both, oldest first", [ORDER_PAYMENTS_OLDEST_FIRST_RULE], ['createOrder', 'createSandboxDeposit', 'listOrderPayments'], async (ctx, evidence) => {
    const made = await orderWithTwoDeposits(evidence, ctx, 'order-payments/oldest-first');
    if (!('txHashes' in made)) return made;
    const res = await call(evidence, 'listOrderPayments', { auth: key, path: { orderId: made.orderId }, label: 'the payments of the order' }, ctx);
    const bad = expectOk('listOrderPayments', res, evidence, 'GET /v2/orders/{orderId}/payments failed');
    if (bad) return bad;
    const listed = dataOf(res).map((p) => String(p.txHash));
    if (JSON.stringify(listed) !== JSON.stringify(made.txHashes)) {
      const missing = made.txHashes.filter((h) => !listed.includes(h));
      return fail(
        missing.length > 0
          ? `the payments of the order list ${JSON.stringify(listed)}, without ${JSON.stringify(missing)}: every deposit is listed, verified or not`
          : `the payments of the order list ${JSON.stringify(listed)}; deposited one after the other, oldest first is ${JSON.stringify(made.txHashes)}`,
        ORDER_PAYMENTS_OLDEST_FIRST_RULE,
        evidence,
      );
    }
    return pass();
  });

  // ---- the search answers the most recent match ------------------------------------------------
  check('search.most-recent', 'GET /transactions?orderNumber= of an order with two payments answers the most recent (the second deposit)', [SEARCH_MOST_RECENT_RULE], ['createOrder', 'createSandboxDeposit', 'searchTransaction'], async (ctx, evidence) => {
    const made = await orderWithTwoDeposits(evidence, ctx, 'search/most-recent');
    if (!('txHashes' in made)) return made;
    const res = await call(evidence, 'searchTransaction', { auth: key, query: { orderNumber: made.orderNumber }, headers: { 'x-tenant-id': o.creds.tenantId }, label: 'search the order number' }, ctx);
    const bad = expectOk('searchTransaction', res, evidence, 'GET /transactions?orderNumber= of an order with two payments failed');
    if (bad) return bad;
    const found = isObj(res.json) ? res.json.txHash : undefined;
    if (found !== made.txHashes[1]) {
      return fail(`GET /transactions?orderNumber=${made.orderNumber} answered the payment with txHash ${JSON.stringify(found)}; of the two (${made.txHashes.join(', then ')}), the most recent is ${made.txHashes[1]}`, SEARCH_MOST_RECENT_RULE, evidence);
    }
    return pass();
  });

  return checks;
}
