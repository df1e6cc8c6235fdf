// Rules that need state, checked through the API and the sandbox (skipped, not failed, when the
// implementation has no sandbox, and all skipped under --skip-stateful):
// - a repeated thirdPartyId answers 409 duplicate-third-party-id naming the existing
//   transaction (every operation whose body has a thirdPartyId and that documents a 409);
// - a staking payout without durationInMonths is accepted and listed as an active staking;
// - a payout is pending until it settles, then completed (or cancelled);
// - only a payment in pending_confirmation can be refunded, once;
// - a cancelled order is a 404 on lookup while its payments still answer;
// - GET /transactions without orderNumber and txHash is a 400 search-parameter-required;
// - a payment of an order gives amount in the asset's units when exact, else only amountBaseUnits;
// - POST /v2/orders with a repeated Idempotency-Key replays the first answer, or 422 for another body;
// - GET /transactions/users pages with its Next-Cursor header, and refuses another list's cursor;
// - with another tenant's credentials, nothing of this tenant can be read by id.
import { AMOUNT_RULE, ASSET_DECIMALS } from '../../generated/vocabulary.ts';
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import { subSeed } from '../core/seed.ts';
import type { ApiClient, ApiResponse, Auth, KeyCredentials } from '../core/openapi/client.ts';
import type { ApiOperation } from '../core/openapi/contract.ts';
import { statefulRun } from './checks.ts';
import { prepareRequest } from './fixtures.ts';
import { freshen } from '../core/openapi/requests.ts';
import {
  API,
  CANCELLED_ORDER_RULE,
  DUPLICATE_THIRD_PARTY_RULE,
  ISOLATION_RULE,
  ORDER_IDEMPOTENCY_RULE,
  PAYMENT_AMOUNT_RULE,
  PAYOUT_SETTLES_RULE,
  REFUND_RULE,
  USER_PAGING_RULE,
  SEARCH_PARAMETER_RULE,
  STAKING_DEFAULT_RULE,
  PAGING_INSERTS_RULE,
  answerRule,
} from './rules.ts';
import type { ApiRule } from './rules.ts';
import { constraints, isObj } from '../core/openapi/schema.ts';
import { Unavailable } from './state.ts';
import type { ApiState } from './state.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { fail, pass } from '../core/outcome.ts';
import { judgeProblem, judgeSuccess } from './verdict.ts';

const GROUP = 'stateful rules';

/** The rules a repeated thirdPartyId judges, per operation: the seed's error row and the operation's written rule. */
function duplicateCovers(operationId: string): NonNullable<ApiRule['covers']> {
  if (operationId === 'createStakingPayout') return ['interface#errors-staking-duplicate', 'createStakingPayout#duplicate-names-existing'];
  return ['interface#errors-payout-duplicate', ...(operationId === 'createPayout' ? (['createPayout#duplicate-names-existing'] as const) : [])];
}

export interface StatefulChecksOptions {
  operations: readonly ApiOperation[];
  state: ApiState;
  client: ApiClient;
  creds: KeyCredentials;
  other?: KeyCredentials;
  skipStateful: boolean;
}

type Json = Record<string, unknown>;

export function statefulChecks(o: StatefulChecksOptions): Check[] {
  const checks: Check[] = [];
  const s = o.state;
  const key: Auth = s.keyAuth();
  const check = (id: string, title: string, rules: ApiRule[], run: (ctx: CheckContext, evidence: Exchange[]) => Promise<CheckOutcome>): void => {
    checks.push(defineCheck({ book: API, id: `rules.${id}`, title, group: GROUP, rules, run: statefulRun(o.skipStateful, run) }));
  };
  const call = async (evidence: Exchange[], operationId: string, req: Parameters<ApiClient['call']>[1], ctx: CheckContext): Promise<ApiResponse> => {
    const res = await o.client.call(s.op(operationId), req, ctx.signal);
    evidence.push(res.exchange);
    return res;
  };
  /** The one transaction of a user, read back through GET /transactions/users. */
  const readBack = async (
    evidence: Exchange[],
    userId: string,
    transactionId: string,
    ctx: CheckContext,
    creds: KeyCredentials = o.creds,
    label = `read back ${transactionId}`,
  ): Promise<{ res: ApiResponse; record: Json | null }> => {
    const res = await call(
      evidence,
      'listUserTransactions',
      {
        auth: { kind: 'key', apiKey: creds.apiKey, apiHash: creds.apiHash },
        query: { userId, transactionId },
        headers: { 'x-tenant-id': creds.tenantId },
        label,
      },
      ctx,
    );
    const list = Array.isArray(res.json) ? res.json : [];
    const record = list.find((r): r is Json => isObj(r) && r.id === transactionId) ?? null;
    return { res, record };
  };
  const expectOk = (op: ApiOperation, res: ApiResponse, evidence: Exchange[], what: string): CheckOutcome | null => {
    const verdict = judgeSuccess(op, res, evidence);
    if (verdict.status === 'passed') return null;
    if (verdict.status === 'failed') return fail(`${what}: ${verdict.failure.message}`, verdict.failure.rule, evidence);
    throw new Unavailable(`${what}: ${verdict.status === 'not_implemented' ? verdict.reason : 'skipped'}`, evidence);
  };

  // ---- duplicate thirdPartyId, for every operation that has one and documents a 409 ----------
  for (const op of o.operations) {
    const body = op.spec.requestBody ? constraints(op.spec.requestBody.schema) : null;
    if (!body || !('thirdPartyId' in body.properties) || !op.spec.responses.some((r) => r.status === '409')) continue;
    check(
      `duplicate-third-party-id.${op.spec.operationId}`,
      `${op.spec.method.toUpperCase()} ${op.spec.path}: a repeated thirdPartyId gets 409 duplicate-third-party-id with existingTransactionId`,
      [{ ...DUPLICATE_THIRD_PARTY_RULE, covers: duplicateCovers(op.spec.operationId) }, answerRule(op.spec.operationId, 409, 'duplicate-third-party-id')],
      async (ctx, evidence) => {
        const auth = await s.authFor(op);
        const first = await prepareRequest(s, op, 'duplicate/first', 'success');
        const res1 = await call(evidence, op.spec.operationId, { auth, ...first, label: 'first request' }, ctx);
        const bad = expectOk(op, res1, evidence, 'the first request did not succeed');
        if (bad) return bad;
        const created = res1.json as Json;
        const thirdPartyId = (first.body as Json).thirdPartyId;
        // Same thirdPartyId, the rest of the body different: the rule holds "whatever the rest of the body".
        const again = freshen(op.spec.requestBody!.schema, first.body, subSeed(ctx.seed, `${op.spec.operationId}/duplicate/second`)) as Json;
        const res2 = await call(evidence, op.spec.operationId, { auth, ...first, body: { ...again, thirdPartyId }, label: 'same thirdPartyId again' }, ctx);
        const verdict = judgeProblem(op, res2, { status: 409, slug: 'duplicate-third-party-id' }, DUPLICATE_THIRD_PARTY_RULE, evidence);
        if (verdict.status !== 'passed') return verdict;
        const existing = (res2.json as Json).existingTransactionId;
        if (existing !== created.transactionId) {
          return fail(`existingTransactionId is ${JSON.stringify(existing)}, not the first request's transaction ${JSON.stringify(created.transactionId)}`, DUPLICATE_THIRD_PARTY_RULE, evidence);
        }
        return pass();
      },
    );
  }

  // ---- staking default duration --------------------------------------------------------------
  if (s.hasOp('createStakingPayout') && s.hasOp('listUserTransactions')) {
    check(
      'staking-default-duration',
      'a staking payout without durationInMonths is accepted (3 months) and listed as an active staking of usdAmount',
      [STAKING_DEFAULT_RULE],
      async (ctx, evidence) => {
        const op = s.op('createStakingPayout');
        const parts = await prepareRequest(s, op, 'default-duration', 'success');
        const body = { ...(parts.body as Json) };
        delete body.durationInMonths;
        const res = await call(evidence, op.spec.operationId, { auth: key, ...parts, body, label: 'staking payout without durationInMonths' }, ctx);
        const bad = expectOk(op, res, evidence, 'a staking payout without durationInMonths was not accepted');
        if (bad) return bad;
        const id = String((res.json as Json).transactionId);
        const { res: listed, record } = await readBack(evidence, String(body.userId), id, ctx);
        const badList = expectOk(s.op('listUserTransactions'), listed, evidence, 'GET /transactions/users did not answer');
        if (badList) return badList;
        if (!record) return fail(`GET /transactions/users does not list the new staking payout ${id}`, STAKING_DEFAULT_RULE, evidence);
        const wrong = mismatches(record, { type: 'staking', status: 'active', amount: body.usdAmount, durationInMonths: 3 });
        if (wrong.length > 0) return fail(`the staking payout reads back with ${wrong.join(', ')}`, STAKING_DEFAULT_RULE, evidence);
        return pass();
      },
    );
  }

  // ---- a payout settles ---------------------------------------------------------------------
  if (s.hasOp('settleSandboxPayout')) {
    check('payout-settles', 'a payout is pending until it settles, then completed (success) or cancelled', [PAYOUT_SETTLES_RULE], async (ctx, evidence) => {
      await s.sandbox();
      for (const [settle, expected] of [
        ['success', 'completed'],
        ['cancelled', 'cancelled'],
      ] as const) {
        const payout = await s.payout(true);
        const before = await readBack(evidence, payout.userId, payout.transactionId, ctx);
        if (!before.record) return fail(`the new payout ${payout.transactionId} is not listed by GET /transactions/users`, PAYOUT_SETTLES_RULE, evidence);
        const wrongBefore = mismatches(before.record, { status: 'pending', type: 'payout', side: 'credit' });
        if (wrongBefore.length > 0) return fail(`a new payout reads back with ${wrongBefore.join(', ')}`, PAYOUT_SETTLES_RULE, evidence);
        if ('completedDate' in before.record) return fail('a pending payout already has a completedDate', PAYOUT_SETTLES_RULE, evidence);
        const op = s.op('settleSandboxPayout');
        const res = await call(evidence, op.spec.operationId, { auth: key, path: { transactionId: payout.transactionId }, body: { status: settle }, label: `settle (${settle})` }, ctx);
        const bad = expectOk(op, res, evidence, `settling the payout (${settle}) failed`);
        if (bad) return bad;
        const after = await readBack(evidence, payout.userId, payout.transactionId, ctx);
        if (!after.record) return fail(`the settled payout ${payout.transactionId} is no longer listed`, PAYOUT_SETTLES_RULE, evidence);
        const wrongAfter = mismatches(after.record, { status: expected });
        if (wrongAfter.length > 0) return fail(`after settling with ${settle}, the payout reads back with ${wrongAfter.join(', ')}`, PAYOUT_SETTLES_RULE, evidence);
        if (typeof after.record.completedDate !== 'string') return fail(`a ${expected} payout has no completedDate`, PAYOUT_SETTLES_RULE, evidence);
      }
      return pass();
    });
  }

  // ---- refunds ------------------------------------------------------------------------------
  if (s.hasOp('refundPayment')) {
    check('refund-pending-confirmation-only', 'only a payment in pending_confirmation can be refunded, once; it then reads back refunded', [REFUND_RULE, answerRule('refundPayment', 409, 'not-refundable')], async (ctx, evidence) => {
      await s.sandbox();
      const email = s.refundEmail();
      const op = s.op('refundPayment');
      const payment = await s.payment(true);
      const before = await readBack(evidence, payment.userId, payment.transactionId, ctx);
      if (!before.record || before.record.status !== 'pending_confirmation') {
        return fail(`the new unlinked payment does not read back as pending_confirmation (${before.record ? `status ${JSON.stringify(before.record.status)}` : 'not listed'})`, REFUND_RULE, evidence);
      }
      const refund = (txId: string, label: string): Promise<ApiResponse> =>
        call(evidence, op.spec.operationId, { auth: key, headers: { 'x-tenant-id': o.creds.tenantId }, body: { txId, email }, label }, ctx);
      const res = await refund(payment.transactionId, 'refund the payment');
      const bad = expectOk(op, res, evidence, 'the refund of a payment in pending_confirmation failed');
      if (bad) return bad;
      if ((res.json as Json).status !== 'refunded') return fail(`the refund answered status ${JSON.stringify((res.json as Json).status)}, not refunded`, REFUND_RULE, evidence);
      const after = await readBack(evidence, payment.userId, payment.transactionId, ctx);
      if (!after.record || after.record.status !== 'refunded') return fail('the refunded payment does not read back as refunded', REFUND_RULE, evidence);
      const twice = await refund(payment.transactionId, 'refund it again');
      const v2 = judgeProblem(op, twice, { status: 409, slug: 'not-refundable' }, REFUND_RULE, evidence);
      if (v2.status !== 'passed') return v2;
      const payout = await s.payout(false);
      const notPayment = await refund(payout.transactionId, 'refund a payout');
      return judgeProblem(op, notPayment, { status: 409, slug: 'not-refundable' }, REFUND_RULE, evidence);
    });
  }

  // ---- cancelled orders ----------------------------------------------------------------------
  if (s.hasOp('cancelSandboxOrder') && s.hasOp('getOrder')) {
    check('cancelled-order-not-found', 'a cancelled order is a 404 on GET /v2/orders/{orderId} while GET .../payments still answers', [CANCELLED_ORDER_RULE, answerRule('getOrder', 404, 'not-found')], async (ctx, evidence) => {
      await s.sandbox();
      const order = await s.order(true);
      const get = s.op('getOrder');
      const open = await call(evidence, 'getOrder', { auth: key, path: { orderId: order.orderId }, label: 'read the open order' }, ctx);
      const bad = expectOk(get, open, evidence, 'the open order could not be read');
      if (bad) return bad;
      const cancel = await call(evidence, 'cancelSandboxOrder', { auth: key, path: { orderId: order.orderId }, label: 'cancel the order' }, ctx);
      const badCancel = expectOk(s.op('cancelSandboxOrder'), cancel, evidence, 'cancelling the order failed');
      if (badCancel) return badCancel;
      const gone = await call(evidence, 'getOrder', { auth: key, path: { orderId: order.orderId }, label: 'read the cancelled order' }, ctx);
      const v = judgeProblem(get, gone, { status: 404, slug: 'not-found' }, CANCELLED_ORDER_RULE, evidence);
      if (v.status !== 'passed') return v.status === 'not_implemented' ? fail(`the cancelled order answered ${describeAnswer(gone)}, not 404 not-found`, CANCELLED_ORDER_RULE, evidence) : v;
      if (!s.hasOp('listOrderPayments')) return pass();
      const payments = await call(evidence, 'listOrderPayments', { auth: key, path: { orderId: order.orderId }, label: 'read the payments of the cancelled order' }, ctx);
      const badPayments = judgeSuccess(s.op('listOrderPayments'), payments, evidence);
      if (badPayments.status === 'failed') {
        return fail(`the payments of a cancelled order must stay available: ${badPayments.failure.message}`, CANCELLED_ORDER_RULE, evidence);
      }
      return badPayments;
    });
  }

  // ---- a payment's amount is in the asset's units ---------------------------------------------
  if (s.hasOp('createOrder') && s.hasOp('createSandboxDeposit') && s.hasOp('searchTransaction')) {
    check('payment-amount-units', "a payment of an order: amount in the asset's units when exact, else absent; amountBaseUnits exact", [PAYMENT_AMOUNT_RULE], async (ctx, evidence) => {
      await s.sandbox();
      const assets = Object.entries(ASSET_DECIMALS);
      const fine = assets.find(([, d]) => d <= AMOUNT_RULE.maxScale);
      const fineGrained = assets.find(([, d]) => d > AMOUNT_RULE.maxScale);
      const cases: Array<[string | undefined, string]> = [
        ...(fine ? [[fine[0], '49990000'] as [string, string]] : []),
        // More places than an Amount keeps: amount must be absent, not rounded.
        ...(fineGrained ? [[fineGrained[0], `1${'0'.repeat(fineGrained[1] - 1)}1`] as [string, string]] : []),
        // No asset: no decimals to convert with.
        [undefined, '1000000'],
      ];
      for (const [assetId, baseUnits] of cases) {
        const order = await call(evidence, 'createOrder', { auth: key, body: { merchantReference: `amount-units-${assetId ?? 'none'}`, amountMinor: 100, ...(assetId ? { assetId } : {}) }, label: `create an order in ${assetId ?? 'no asset'}` }, ctx);
        const badOrder = expectOk(s.op('createOrder'), order, evidence, 'creating an order failed');
        if (badOrder) return badOrder;
        const orderId = String((order.json as Json).orderId);
        const txHash = `0x${subSeed(ctx.seed, `amount-units/${baseUnits}`).toString(16).padStart(8, '0')}${'5e'.repeat(28)}`;
        const dep = await call(evidence, 'createSandboxDeposit', { auth: key, path: { orderId }, body: { amountBaseUnits: baseUnits, verified: true, txHash }, label: `deposit ${baseUnits} base units` }, ctx);
        const badDep = expectOk(s.op('createSandboxDeposit'), dep, evidence, 'the deposit failed');
        if (badDep) return badDep;
        const found = await call(evidence, 'searchTransaction', { auth: key, query: { txHash }, headers: { 'x-tenant-id': o.creds.tenantId }, label: 'find the payment by txHash' }, ctx);
        const badFound = expectOk(s.op('searchTransaction'), found, evidence, 'GET /transactions did not find the payment');
        if (badFound) return badFound;
        const record = found.json as Json;
        if (record.amountBaseUnits !== baseUnits) return fail(`amountBaseUnits is ${JSON.stringify(record.amountBaseUnits)}, not the deposited "${baseUnits}"`, PAYMENT_AMOUNT_RULE, evidence);
        const decimals = assetId === undefined ? undefined : ASSET_DECIMALS[assetId];
        const expected = decimals === undefined ? undefined : inAssetUnits(baseUnits, decimals);
        if (expected === undefined && 'amount' in record) {
          return fail(`amount is ${JSON.stringify(record.amount)} for ${baseUnits} base units of ${assetId ?? 'no asset'}, which have no exact Amount: it must be absent`, PAYMENT_AMOUNT_RULE, evidence);
        }
        if (expected !== undefined && record.amount !== expected) {
          return fail(`amount is ${JSON.stringify(record.amount)} for ${baseUnits} base units of ${assetId}, not ${expected} in the asset's units`, PAYMENT_AMOUNT_RULE, evidence);
        }
      }
      return pass();
    });
  }

  // ---- Idempotency-Key on order creation -----------------------------------------------------
  const createOrder = s.hasOp('createOrder') ? s.op('createOrder') : null;
  if (createOrder && createOrder.spec.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')) {
    check('order-idempotency', 'POST /v2/orders: a repeated Idempotency-Key replays the first answer; with another body it gets 422 idempotency-key-reused', [ORDER_IDEMPOTENCY_RULE, answerRule('createOrder', 422, 'idempotency-key-reused')], async (ctx, evidence) => {
      const parts = await prepareRequest(s, createOrder, 'idempotency', 'success');
      const auth = await s.authFor(createOrder);
      const idem = `conformance-${subSeed(ctx.seed, 'idempotency').toString(16)}-${Date.now().toString(36)}`;
      const send = (body: unknown, label: string) => call(evidence, 'createOrder', { auth, ...parts, body, headers: { ...parts.headers, 'idempotency-key': idem }, label }, ctx);
      const first = await send(parts.body, 'create with an Idempotency-Key');
      const bad = expectOk(createOrder, first, evidence, 'creating an order with an Idempotency-Key failed');
      if (bad) return bad;
      const again = await send(parts.body, 'the same request again');
      const badAgain = expectOk(createOrder, again, evidence, 'the repeated request failed');
      if (badAgain) return badAgain;
      if (JSON.stringify(again.json) !== JSON.stringify(first.json)) return fail('the repeated request did not answer the first answer again (another order?)', ORDER_IDEMPOTENCY_RULE, evidence);
      if (again.exchange.response.headers['idempotent-replayed'] !== 'true') return fail('the replayed answer lacks Idempotent-Replayed: true', ORDER_IDEMPOTENCY_RULE, evidence);
      const body = parts.body as Json;
      const reused = await send({ ...body, merchantReference: `${String(body.merchantReference)}-other` }, 'the same key with another body');
      return judgeProblem(createOrder, reused, { status: 422, slug: 'idempotency-key-reused' }, ORDER_IDEMPOTENCY_RULE, evidence);
    });
  }

  // ---- paging a user's transactions ----------------------------------------------------------
  const listUser = s.hasOp('listUserTransactions') ? s.op('listUserTransactions') : null;
  if (listUser && s.hasOp('createPayout') && listUser.spec.parameters.some((p) => p.in === 'query' && p.name === 'cursor')) {
    check('user-transactions-paging', 'GET /transactions/users pages with the Next-Cursor header, every record once, and refuses a cursor of another list', [USER_PAGING_RULE], async (ctx, evidence) => {
      await s.sandbox();
      const payoutOp = s.op('createPayout');
      const userId = `paging-${subSeed(ctx.seed, 'paging').toString(16)}-${Date.now().toString(36)}`;
      const created: string[] = [];
      for (let i = 0; i < 3; i++) {
        const parts = await prepareRequest(s, payoutOp, `paging/${i}`, 'success');
        const res = await call(evidence, 'createPayout', { auth: await s.authFor(payoutOp), ...parts, body: { ...(parts.body as Json), userId }, label: `payout ${i + 1} of ${userId}` }, ctx);
        const bad = expectOk(payoutOp, res, evidence, 'a payout for the paging user failed');
        if (bad) return bad;
        created.push(String((res.json as Json).transactionId));
      }
      const page = (query: Record<string, string>, label: string) =>
        call(evidence, 'listUserTransactions', { auth: key, query, headers: { 'x-tenant-id': o.creds.tenantId }, label }, ctx);
      const seen: string[] = [];
      let cursor: string | undefined;
      let firstCursor: string | undefined;
      for (let n = 0; n < 4; n++) {
        const res = await page({ userId, limit: '1', ...(cursor ? { cursor } : {}) }, `page ${n + 1}`);
        const bad = expectOk(listUser, res, evidence, `page ${n + 1} failed`);
        if (bad) return bad;
        seen.push(...(res.json as Json[]).map((r) => String(r.id)));
        cursor = res.exchange.response.headers['next-cursor'];
        firstCursor ??= cursor;
        if (cursor === undefined) break;
      }
      if (cursor !== undefined) return fail('the pages of three transactions with limit 1 did not end after three pages', USER_PAGING_RULE, evidence);
      if (JSON.stringify([...seen].sort()) !== JSON.stringify([...created].sort()) || seen.length !== 3) {
        return fail(`paging listed ${JSON.stringify(seen)}, not each of ${JSON.stringify(created)} once`, USER_PAGING_RULE, evidence);
      }
      if (firstCursor === undefined) return fail('the first page of three transactions with limit 1 had no Next-Cursor header', USER_PAGING_RULE, evidence);
      const foreign = await page({ userId: `${userId}-other`, cursor: firstCursor }, "another user's list with this cursor");
      return judgeProblem(listUser, foreign, { status: 400, slug: 'validation-failed' }, USER_PAGING_RULE, evidence);
    });
  }

  // ---- paging while records are created (issue 67) -------------------------------------------
  if (listUser && s.hasOp('createPayout') && listUser.spec.parameters.some((p) => p.in === 'query' && p.name === 'cursor')) {
    check('paging.inserts-between-pages', 'GET /transactions/users with limit 1 over three payouts, a new payout created before each next page: the pages are the three, newest first, each once, and the third is the last', [PAGING_INSERTS_RULE], async (ctx, evidence) => {
      await s.sandbox();
      const payoutOp = s.op('createPayout');
      const userId = `inserts-${subSeed(ctx.seed, 'paging/inserts').toString(16)}-${Date.now().toString(36)}`;
      const payout = async (i: number): Promise<string | CheckOutcome> => {
        const parts = await prepareRequest(s, payoutOp, `paging-inserts/${i}`, 'success');
        const res = await call(evidence, 'createPayout', { auth: await s.authFor(payoutOp), ...parts, body: { ...(parts.body as Json), userId }, label: `payout ${i + 1} of ${userId}` }, ctx);
        return expectOk(payoutOp, res, evidence, 'a payout for the paging user failed') ?? String((res.json as Json).transactionId);
      };
      const first: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = await payout(i);
        if (typeof id !== 'string') return id;
        first.unshift(id); // newest first
      }
      const pages: string[][] = [];
      let cursor: string | undefined;
      for (let n = 0; n < 3; n++) {
        const res = await call(evidence, 'listUserTransactions', { auth: key, query: { userId, limit: '1', ...(cursor ? { cursor } : {}) }, headers: { 'x-tenant-id': o.creds.tenantId }, label: `page ${n + 1}` }, ctx);
        const bad = expectOk(listUser, res, evidence, `page ${n + 1} failed`);
        if (bad) return bad;
        pages.push((res.json as Json[]).map((r) => String(r.id)));
        cursor = res.exchange.response.headers['next-cursor'];
        if (n < 2 && cursor === undefined) return fail(`page ${n + 1} of three older records had no Next-Cursor`, PAGING_INSERTS_RULE, evidence);
        // A record created after this page, before the next: it must not shift the pages.
        if (n < 2) {
          const id = await payout(3 + n);
          if (typeof id !== 'string') return id;
        }
      }
      if (JSON.stringify(pages) !== JSON.stringify(first.map((id) => [id]))) {
        return fail(`with a payout created before each next page, the pages were ${JSON.stringify(pages)}, not ${JSON.stringify(first.map((id) => [id]))}: records created after the first page shifted them`, PAGING_INSERTS_RULE, evidence);
      }
      if (cursor !== undefined) return fail('the page of the oldest of the first three records carried a Next-Cursor', PAGING_INSERTS_RULE, evidence);
      return pass();
    });
  }

  // ---- search parameter -----------------------------------------------------------------------
  if (s.hasOp('searchTransaction')) {
    check('search-parameter-required', 'GET /transactions without orderNumber and txHash gets 400 search-parameter-required', [SEARCH_PARAMETER_RULE, answerRule('searchTransaction', 400, 'search-parameter-required')], async (ctx, evidence) => {
      const op = s.op('searchTransaction');
      const res = await call(evidence, op.spec.operationId, { auth: key, headers: { 'x-tenant-id': o.creds.tenantId }, label: 'neither orderNumber nor txHash' }, ctx);
      return judgeProblem(op, res, { status: 400, slug: 'search-parameter-required' }, SEARCH_PARAMETER_RULE, evidence);
    });
  }

  // ---- cross-tenant isolation ----------------------------------------------------------------
  const otherOf = (): KeyCredentials => {
    if (!o.other) throw new Unavailable('needs the credentials of another tenant: --other-api-key, --other-api-hash and --other-tenant-id');
    return o.other;
  };
  if (s.hasOp('listUserTransactions')) {
    check('isolation.transaction', "another tenant cannot read this tenant's transaction by id (GET /transactions/users)", [ISOLATION_RULE], async (ctx, evidence) => {
      const b = otherOf();
      const payout = await s.payout(true);
      const mine = await readBack(evidence, payout.userId, payout.transactionId, ctx, o.creds, 'this tenant reads its payout');
      if (!mine.record) return fail(`this tenant cannot read its own new payout ${payout.transactionId}`, ISOLATION_RULE, evidence);
      const theirs = await readBack(evidence, payout.userId, payout.transactionId, ctx, b, 'the other tenant reads it');
      if (theirs.res.status !== null && theirs.res.status >= 200 && theirs.res.status < 300) {
        if (theirs.record || (Array.isArray(theirs.res.json) && theirs.res.json.length > 0)) {
          return fail(`the other tenant was shown this tenant's transaction ${payout.transactionId}`, ISOLATION_RULE, evidence);
        }
        return judgeSuccess(s.op('listUserTransactions'), theirs.res, evidence);
      }
      return fail(`the other tenant's read answered ${describeAnswer(theirs.res)}; the contract answers 200 with an empty array for a user without transactions`, ISOLATION_RULE, evidence);
    });
  }
  if (s.hasOp('getOrder')) {
    check('isolation.order', "another tenant cannot read this tenant's order or its payments by id", [ISOLATION_RULE], async (ctx, evidence) => {
      const b = otherOf();
      const bAuth: Auth = { kind: 'key', apiKey: b.apiKey, apiHash: b.apiHash };
      const order = await s.order(true);
      const mine = await call(evidence, 'getOrder', { auth: key, path: { orderId: order.orderId }, label: 'this tenant reads its order' }, ctx);
      const bad = expectOk(s.op('getOrder'), mine, evidence, 'this tenant cannot read its own order');
      if (bad) return bad;
      const theirs = await call(evidence, 'getOrder', { auth: bAuth, path: { orderId: order.orderId }, label: 'the other tenant reads it' }, ctx);
      if (leaked(theirs)) return fail(`the other tenant was shown this tenant's order ${order.orderId} (${theirs.status})`, ISOLATION_RULE, evidence);
      const v = judgeProblem(s.op('getOrder'), theirs, { status: 404, slug: 'not-found' }, ISOLATION_RULE, evidence);
      if (v.status !== 'passed') return v;
      if (!s.hasOp('listOrderPayments')) return v;
      const payments = await call(evidence, 'listOrderPayments', { auth: bAuth, path: { orderId: order.orderId }, label: 'the other tenant reads its payments' }, ctx);
      if (leaked(payments)) return fail(`the other tenant was shown the payments of this tenant's order ${order.orderId} (${payments.status})`, ISOLATION_RULE, evidence);
      return judgeProblem(s.op('listOrderPayments'), payments, { status: 404, slug: 'not-found' }, ISOLATION_RULE, evidence);
    });
  }
  if (s.hasOp('searchTransaction')) {
    check('isolation.search', "another tenant cannot find this tenant's payment by txHash (GET /transactions)", [ISOLATION_RULE], async (ctx, evidence) => {
      const b = otherOf();
      const paid = await s.paidOrder();
      const op = s.op('searchTransaction');
      const mine = await call(evidence, 'searchTransaction', { auth: key, query: { txHash: paid.txHash }, headers: { 'x-tenant-id': o.creds.tenantId }, label: 'this tenant searches its payment' }, ctx);
      const bad = expectOk(op, mine, evidence, 'this tenant cannot find its own payment');
      if (bad) return bad;
      const theirs = await call(
        evidence,
        'searchTransaction',
        { auth: { kind: 'key', apiKey: b.apiKey, apiHash: b.apiHash }, query: { txHash: paid.txHash }, headers: { 'x-tenant-id': b.tenantId }, label: 'the other tenant searches it' },
        ctx,
      );
      if (leaked(theirs)) return fail(`the other tenant found this tenant's payment ${paid.txHash} (${theirs.status})`, ISOLATION_RULE, evidence);
      return judgeProblem(op, theirs, { status: 404, slug: 'not-found' }, ISOLATION_RULE, evidence);
    });
  }
  return checks;
}

/** A 2xx answer to another tenant's read by id: this tenant's data was shown to it. */
function leaked(res: ApiResponse): boolean {
  return res.status !== null && res.status >= 200 && res.status < 300;
}

/** `status "completed" (expected "pending")` for each field of `expected` that differs. */
function mismatches(record: Json, expected: Record<string, unknown>): string[] {
  return Object.entries(expected)
    .filter(([k, v]) => record[k] !== v)
    .map(([k, v]) => `${k} ${JSON.stringify(record[k])} (expected ${JSON.stringify(v)})`);
}

/** base / 10^decimals as a number when it fits the Amount rule exactly, else undefined. */
function inAssetUnits(baseUnits: string, decimals: number): number | undefined {
  const padded = baseUnits.padStart(decimals + 1, '0');
  const int = padded.slice(0, padded.length - decimals);
  const frac = padded.slice(padded.length - decimals).replace(/0+$/, '');
  if (frac.length > AMOUNT_RULE.maxScale || (int + frac).replace(/^0+/, '').length > AMOUNT_RULE.maxSignificantDigits) return undefined;
  const value = Number(frac ? `${int}.${frac}` : int);
  return value > AMOUNT_RULE.maximum ? undefined : value;
}
