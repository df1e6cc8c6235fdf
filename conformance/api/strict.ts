// Round four of the api checks: answers the suite used to receive without judging, and inputs
// it never sent.
// - paging: a full last page carries no Next-Cursor; newest first is judged as an order;
// - amounts: the exact stored decimal is answered back; beyond 15 significant digits is refused;
// - Idempotency-Key is scoped to the tenant environment (a second tenant, same key and body);
// - isolation of writes: a revoke, a refund, an endpoint edit, a delivery retry aimed at another
//   tenant's resource is answered exactly like one aimed at an unknown id.
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { subSeed } from '../core/seed.ts';
import type { ApiClient, ApiRequest, ApiResponse, Auth, KeyCredentials } from '../core/openapi/client.ts';
import { draw, sameShape } from '../core/openapi/requests.ts';
import { isObj } from '../core/openapi/schema.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { fail, pass } from '../core/outcome.ts';
import { ruleKit } from './rule-kit.ts';
import { prepareRequest } from './fixtures.ts';
import { judgeProblem } from './verdict.ts';
import { Unavailable } from './state.ts';
import type { ApiState } from './state.ts';
import {
  AMOUNT_DIGITS_RULE,
  EVENTS_NEWEST_FIRST_RULE,
  EXACT_AMOUNT_RULE,
  IDEMPOTENCY_TENANT_RULE,
  LAST_PAGE_RULE,
  NEWEST_FIRST_RULE,
  WRITE_ISOLATION_RULE,
} from './rules.ts';

type Json = Record<string, unknown>;

/** Amounts with every one of the 8 decimal places used: any rounding changes them. */
const EXACT_AMOUNTS = ['1.23456789', '0.00000001', '98765.43210987'] as const;
/** 16 significant digits within 8 decimal places: valid but for maxSignificantDigits 15. */
const TOO_MANY_DIGITS = ['12345678.12345678', '1234567890.123456'] as const;
/** Payouts created for the ordering checks; a pause between them keeps their createdDate apart. */
const PAGING_RECORDS = 3;
const CREATION_GAP_MS = 20;

export interface StrictApiChecksOptions {
  state: ApiState;
  client: ApiClient;
  creds: KeyCredentials;
  other?: KeyCredentials;
  skipStateful: boolean;
}

export function strictApiChecks(o: StrictApiChecksOptions): Check[] {
  const s = o.state;
  const key: Auth = s.keyAuth();
  const tenant = { 'x-tenant-id': o.creds.tenantId };
  const { checks, check, call, expectOk } = ruleKit(o);
  const otherOf = (): KeyCredentials => {
    if (!o.other) throw new Unavailable('needs the credentials of a second tenant: --other-api-key, --other-api-hash and --other-tenant-id');
    return o.other;
  };
  const keyOf = (c: KeyCredentials): Auth => ({ kind: 'key', apiKey: c.apiKey, apiHash: c.apiHash });
  /** A payout of `userId` with `amount` written as the exact JSON text given. */
  const payoutWith = async (evidence: Exchange[], ctx: CheckContext, label: string, userId: string, amount?: string): Promise<ApiResponse> => {
    const op = s.op('createPayout');
    const parts = await prepareRequest(s, op, label, 'success');
    const body = { ...(parts.body as Json), userId };
    const text = amount === undefined ? JSON.stringify(body) : JSON.stringify({ ...body, amount: 0 }).replace(/"amount":0/, `"amount":${amount}`);
    return call(evidence, 'createPayout', { auth: await s.authFor(op), ...parts, body: undefined, rawBody: { contentType: 'application/json', bytes: Buffer.from(text, 'utf8') }, label }, ctx);
  };
  const listUser = (evidence: Exchange[], ctx: CheckContext, query: Record<string, string>, label: string): Promise<ApiResponse> =>
    call(evidence, 'listUserTransactions', { auth: key, query, headers: tenant, label }, ctx);
  const freshUser = (ctx: CheckContext, label: string): string => `${label.replace(/[^A-Za-z0-9]/g, "-")}-${subSeed(ctx.seed, label).toString(16)}-${Date.now().toString(36)}`;

  // ---- paging: newest first as an order, and no cursor on a full last page -------------------
  check('paging.newest-first-full-last-page', `GET /transactions/users: ${PAGING_RECORDS} transactions come newest first (by createdDate), and a page of exactly ${PAGING_RECORDS} (full, and the last) carries no Next-Cursor`, [NEWEST_FIRST_RULE, LAST_PAGE_RULE], ['createPayout', 'listUserTransactions'], async (ctx, evidence) => {
    await s.sandbox();
    const userId = freshUser(ctx, 'order');
    const created: string[] = [];
    for (let i = 0; i < PAGING_RECORDS; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, CREATION_GAP_MS));
      const res = await payoutWith(evidence, ctx, `payout ${i + 1} of ${PAGING_RECORDS}`, userId);
      const bad = expectOk('createPayout', res, evidence, 'a payout for the paging user failed');
      if (bad) return bad;
      created.push(String((res.json as Json).transactionId));
    }
    const newestFirst = [...created].reverse();
    const page = await listUser(evidence, ctx, { userId, limit: String(PAGING_RECORDS) }, `limit ${PAGING_RECORDS}: the whole list on one full page`);
    const bad = expectOk('listUserTransactions', page, evidence, 'GET /transactions/users failed');
    if (bad) return bad;
    const records = (page.json as Json[]).filter(isObj);
    const ids = records.map((r) => String(r.id));
    if (JSON.stringify(ids) !== JSON.stringify(newestFirst)) {
      return fail(`the ${PAGING_RECORDS} transactions were listed as ${JSON.stringify(ids)}; created one after the other, newest first is ${JSON.stringify(newestFirst)}`, NEWEST_FIRST_RULE, evidence);
    }
    const dates = records.map((r) => String(r.createdDate));
    if (dates.some((d, i) => i > 0 && Date.parse(d) > Date.parse(dates[i - 1]!))) return fail(`createdDate is not newest first: ${JSON.stringify(dates)}`, NEWEST_FIRST_RULE, evidence);
    const cursor = page.exchange.response.headers['next-cursor'];
    if (cursor !== undefined) {
      return fail(`the page held all ${PAGING_RECORDS} transactions of the user (limit ${PAGING_RECORDS}, so it is full) and no older record remains, yet it carries Next-Cursor ${JSON.stringify(cursor)}: the last page has none, even when full`, LAST_PAGE_RULE, evidence);
    }
    // The same order across pages of one.
    const paged: string[] = [];
    let next: string | undefined;
    for (let n = 0; n < PAGING_RECORDS; n++) {
      const res = await listUser(evidence, ctx, { userId, limit: '1', ...(next ? { cursor: next } : {}) }, `limit 1, page ${n + 1}`);
      const badPage = expectOk('listUserTransactions', res, evidence, `page ${n + 1} failed`);
      if (badPage) return badPage;
      paged.push(...(res.json as Json[]).filter(isObj).map((r) => String(r.id)));
      next = res.exchange.response.headers['next-cursor'];
      if (next === undefined) break;
    }
    if (JSON.stringify(paged) !== JSON.stringify(newestFirst)) return fail(`pages of one listed ${JSON.stringify(paged)}, not newest first ${JSON.stringify(newestFirst)}`, NEWEST_FIRST_RULE, evidence);
    if (next !== undefined) return fail(`the third page of one (the last, full) carries Next-Cursor ${JSON.stringify(next)}`, LAST_PAGE_RULE, evidence);
    return pass();
  });

  check('paging.events-newest-first', 'GET /v2/events: the order events of a page come newest first (createdAt never increases)', [EVENTS_NEWEST_FIRST_RULE], ['listEvents', 'createOrder'], async (ctx, evidence) => {
    await s.sandbox();
    for (let i = 0; i < 2; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, CREATION_GAP_MS));
      await s.order(true);
    }
    const res = await call(evidence, 'listEvents', { auth: key, query: { limit: '100' }, label: 'the newest order events' }, ctx);
    const bad = expectOk('listEvents', res, evidence, 'GET /v2/events failed');
    if (bad) return bad;
    const data = isObj(res.json) && Array.isArray(res.json.data) ? res.json.data.filter(isObj) : [];
    if (data.length < 2) return fail(`GET /v2/events lists ${data.length} event(s) after two orders were created`, EVENTS_NEWEST_FIRST_RULE, evidence);
    const dates = data.map((e) => String(e.createdAt));
    const i = dates.findIndex((d, n) => n > 0 && Date.parse(d) > Date.parse(dates[n - 1]!));
    if (i > 0) return fail(`event ${i + 1} (createdAt ${dates[i]}) is newer than event ${i} (createdAt ${dates[i - 1]}): the page is not newest first`, EVENTS_NEWEST_FIRST_RULE, evidence);
    return pass();
  });

  // ---- amounts ---------------------------------------------------------------------------------
  check('amount.exact', `a payout's amount is answered back exactly as sent (${EXACT_AMOUNTS.join(', ')}), never rounded`, [EXACT_AMOUNT_RULE], ['createPayout', 'listUserTransactions'], async (ctx, evidence) => {
    await s.sandbox();
    for (const amount of EXACT_AMOUNTS) {
      const userId = freshUser(ctx, `amount-${amount}`);
      const res = await payoutWith(evidence, ctx, `a payout of ${amount}`, userId, amount);
      const bad = expectOk('createPayout', res, evidence, `a payout of ${amount} was not created`);
      if (bad) return bad;
      const id = String((res.json as Json).transactionId);
      if (isObj(res.json) && 'amount' in res.json && res.json.amount !== Number(amount)) {
        return fail(`the payout of ${amount} was answered with amount ${JSON.stringify(res.json.amount)}`, EXACT_AMOUNT_RULE, evidence);
      }
      const back = await listUser(evidence, ctx, { userId, transactionId: id }, `read back the payout of ${amount}`);
      const badBack = expectOk('listUserTransactions', back, evidence, 'GET /transactions/users failed');
      if (badBack) return badBack;
      const record = (back.json as Json[]).find((r) => isObj(r) && r.id === id);
      if (!record) return fail(`the payout ${id} is not listed`, EXACT_AMOUNT_RULE, evidence);
      if (record.amount !== Number(amount)) return fail(`the payout of ${amount} reads back with amount ${JSON.stringify(record.amount)}: the stored decimal must be answered unchanged`, EXACT_AMOUNT_RULE, evidence);
    }
    return pass();
  });

  check('amount.significant-digits', `a payout amount of 16 significant digits (${TOO_MANY_DIGITS.join(', ')}; at most 8 places) is refused 400 validation-failed, not rounded`, [AMOUNT_DIGITS_RULE], ['createPayout'], async (ctx, evidence) => {
    await s.sandbox();
    for (const amount of TOO_MANY_DIGITS) {
      const res = await payoutWith(evidence, ctx, `a payout of ${amount}`, freshUser(ctx, `digits-${amount}`), amount);
      const v = judgeProblem(s.op('createPayout'), res, { status: 400, slug: 'validation-failed' }, AMOUNT_DIGITS_RULE, evidence);
      if (v.status !== 'passed') return v;
    }
    return pass();
  });

  // ---- Idempotency-Key per tenant environment --------------------------------------------------
  check('order-idempotency-per-tenant', 'POST /v2/orders: another tenant sending the same Idempotency-Key and body gets its own new order (keys are scoped to the tenant environment)', [IDEMPOTENCY_TENANT_RULE], ['createOrder'], async (ctx, evidence) => {
    const b = otherOf();
    s.stateful();
    const op = s.op('createOrder');
    const parts = await prepareRequest(s, op, 'idempotency-per-tenant', 'success');
    const idem = `conformance-tenant-${subSeed(ctx.seed, 'idempotency-tenant').toString(16)}-${Date.now().toString(36)}`;
    const send = (auth: Auth, tenantId: string, label: string): Promise<ApiResponse> =>
      call(evidence, 'createOrder', { auth, ...parts, headers: { ...parts.headers, 'x-tenant-id': tenantId, 'idempotency-key': idem }, label }, ctx);
    const first = await send(key, o.creds.tenantId, 'this tenant creates an order with the key');
    const bad = expectOk('createOrder', first, evidence, 'creating an order with an Idempotency-Key failed');
    if (bad) return bad;
    const second = await send(keyOf(b), b.tenantId, 'the other tenant sends the same key and body');
    if (second.status === 422) return fail('the other tenant was refused 422 for a key only this tenant had used: keys are scoped to the tenant environment', IDEMPOTENCY_TENANT_RULE, evidence);
    const badSecond = expectOk('createOrder', second, evidence, "the other tenant's order was not created");
    if (badSecond) return badSecond;
    const a = String((first.json as Json).orderId);
    const other = String((second.json as Json).orderId);
    if (other === a || second.exchange.response.headers['idempotent-replayed'] === 'true') {
      return fail(`the other tenant was answered this tenant's order ${a}${second.exchange.response.headers['idempotent-replayed'] === 'true' ? ' (Idempotent-Replayed: true)' : ''}: its first request with the key must create its own order`, IDEMPOTENCY_TENANT_RULE, evidence);
    }
    return pass();
  });

  // ---- isolation of writes ---------------------------------------------------------------------
  /** An id of the same shape as `like` that names nothing. */
  const unknownId = (like: string, ctx: CheckContext, label: string): string => {
    for (let i = 0; i < 8; i++) {
      const v = draw(sameShape(like), subSeed(ctx.seed, `unknown/${label}/${i}`));
      if (v !== like) return v;
    }
    return `${like}0`;
  };
  /** The other tenant's write at this tenant's resource must be answered as its write at an unknown id. */
  const asIfUnknown = async (
    evidence: Exchange[],
    ctx: CheckContext,
    operationId: string,
    what: string,
    request: (id: string, auth: Auth, tenantId: string) => ApiRequest,
    id: string,
    auth: Auth,
    tenantId: string,
  ): Promise<CheckOutcome | null> => {
    const theirs = await call(evidence, operationId, { ...request(id, auth, tenantId), label: `the other tenant ${what} this tenant's ${id}` }, ctx);
    const unknown = await call(evidence, operationId, { ...request(unknownId(id, ctx, operationId), auth, tenantId), label: `the other tenant ${what} an unknown id` }, ctx);
    const typeOf = (r: ApiResponse): unknown => (isObj(r.json) ? r.json.type : undefined);
    if (theirs.status !== null && theirs.status >= 200 && theirs.status < 300) {
      return fail(`the other tenant ${what} this tenant's ${id} and was answered ${describeAnswer(theirs)}: it acted on another tenant's resource`, WRITE_ISOLATION_RULE, evidence);
    }
    if (theirs.status !== unknown.status || typeOf(theirs) !== typeOf(unknown)) {
      return fail(
        `the other tenant ${what} this tenant's ${id}: answered ${describeAnswer(theirs)}, but an unknown id is answered ${describeAnswer(unknown)}; the difference tells it the resource exists`,
        WRITE_ISOLATION_RULE,
        evidence,
      );
    }
    return null;
  };
  const managementOf = async (evidence: Exchange[], ctx: CheckContext, b: KeyCredentials): Promise<Auth> => {
    const res = await call(evidence, 'listWebhookEndpoints', { auth: keyOf(b), label: "does the other tenant's key have webhooks_manage?" }, ctx);
    if (res.status === null || res.status >= 300) throw new Unavailable(`the other tenant's key cannot manage webhooks (answered ${describeAnswer(res)}); give it webhooks_manage for this check`, evidence);
    return keyOf(b);
  };

  check('isolation.revoke', "another tenant's revoke of this tenant's staking payout is answered as for an unknown id; the staking stays active", [WRITE_ISOLATION_RULE], ['revokeStakingPayout', 'createStakingPayout', 'listUserTransactions'], async (ctx, evidence) => {
    const b = otherOf();
    const staking = await s.staking(true);
    const bad = await asIfUnknown(evidence, ctx, 'revokeStakingPayout', 'revoked', (transactionId, auth, tenantId) => ({ auth, headers: { 'x-tenant-id': tenantId }, body: { transactionId } }), staking.transactionId, keyOf(b), b.tenantId);
    if (bad) return bad;
    const back = await listUser(evidence, ctx, { userId: staking.userId, transactionId: staking.transactionId }, 'this tenant reads its staking payout');
    const record = Array.isArray(back.json) ? back.json.find((r) => isObj(r) && r.id === staking.transactionId) : undefined;
    if (isObj(record) && record.status !== 'active') return fail(`after the other tenant's revoke, this tenant's staking payout reads ${JSON.stringify(record.status)}`, WRITE_ISOLATION_RULE, evidence);
    return pass();
  });

  check('isolation.refund', "another tenant's refund of this tenant's payment is answered as for an unknown id; the payment stays pending_confirmation", [WRITE_ISOLATION_RULE], ['refundPayment', 'createSandboxPayment', 'listUserTransactions'], async (ctx, evidence) => {
    const b = otherOf();
    await s.sandbox();
    const payment = await s.payment(true);
    const email = s.refundEmail();
    const bad = await asIfUnknown(evidence, ctx, 'refundPayment', 'refunded', (txId, auth, tenantId) => ({ auth, headers: { 'x-tenant-id': tenantId }, body: { txId, email } }), payment.transactionId, keyOf(b), b.tenantId);
    if (bad) return bad;
    const back = await listUser(evidence, ctx, { userId: payment.userId, transactionId: payment.transactionId }, 'this tenant reads its payment');
    const record = Array.isArray(back.json) ? back.json.find((r) => isObj(r) && r.id === payment.transactionId) : undefined;
    if (isObj(record) && record.status !== 'pending_confirmation') return fail(`after the other tenant's refund, this tenant's payment reads ${JSON.stringify(record.status)}`, WRITE_ISOLATION_RULE, evidence);
    return pass();
  });

  check('isolation.endpoint-edit', "another tenant's edit of this tenant's webhook endpoint is answered as for an unknown id", [WRITE_ISOLATION_RULE], ['updateWebhookEndpoint', 'listWebhookEndpoints'], async (ctx, evidence) => {
    const b = otherOf();
    const endpointId = await s.ownEndpoint();
    const auth = await managementOf(evidence, ctx, b);
    const url = s.webhookUrl();
    const bad = await asIfUnknown(evidence, ctx, 'updateWebhookEndpoint', 'edited', (id, a) => ({ auth: a, path: { endpointId: id }, body: { url } }), endpointId, auth, b.tenantId);
    return bad ?? pass();
  });

  check('isolation.delivery-retry', "another tenant's retry of this tenant's delivery is answered as for an unknown id", [WRITE_ISOLATION_RULE], ['retryDelivery', 'sendTestWebhook', 'listWebhookEndpoints'], async (ctx, evidence) => {
    const b = otherOf();
    const delivery = await s.testDelivery();
    const auth = await managementOf(evidence, ctx, b);
    const bad = await asIfUnknown(evidence, ctx, 'retryDelivery', 'retried', (id, a) => ({ auth: a, path: { deliveryId: id } }), delivery.id, auth, b.tenantId);
    return bad ?? pass();
  });

  return checks;
}
