// The error rows of the contract that a valid-looking request can reach, one check each, so a
// broken implementation fails by the check meant for its defect:
// - per operation with a JSON body: a body that is not JSON by content type (415), one that
//   is not well-formed (400 malformed-json), one beyond the size limit (413);
// - per operation that needs a permission: a key without it (403 permission-denied; needs
//   --limited-api-key, a key of the tenant environment with no permission);
// - the rows that need state: x-tenant-id missing on GET /transactions, insufficient funds,
//   an unknown refund account or transaction, revoking what is not an active staking payout,
//   unknown orders and searches, notifyUrl destinations, a second active webhook endpoint.
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import { subSeed } from '../core/seed.ts';
import type { ApiClient, ApiRequest, ApiResponse, Auth, KeyCredentials } from '../core/openapi/client.ts';
import { describeOperation } from '../core/openapi/contract.ts';
import type { ApiOperation } from '../core/openapi/contract.ts';
import { guard, statefulRun } from './checks.ts';
import { prepareRequest } from './fixtures.ts';
import { draw, sameShape } from '../core/openapi/requests.ts';
import {
  API,
  DESTINATION_RULE,
  ENDPOINT_EXISTS_RULE,
  INSUFFICIENT_FUNDS_RULE,
  JSON_BODY_RULE,
  NOT_FOUND_RULE,
  PERMISSION_RULE,
  REFUND_ACCOUNT_RULE,
  REVOKE_RULE,
  REVOKE_NOT_ACTIVE_RULE,
  REFUND_ACCOUNT_UNCHANGED_RULE,
  SEARCH_NO_MATCH_RULE,
  TENANT_HEADER_REQUIRED_RULE,
  answerRule,
} from './rules.ts';
import type { ApiRule } from './rules.ts';
import { isObj } from '../core/openapi/schema.ts';
import { Unavailable } from './state.ts';
import type { ApiState } from './state.ts';
import { fail, pass, skip } from '../core/outcome.ts';
import { judgeProblem, judgeSuccess } from './verdict.ts';

const GROUP = 'error rows';
/** Beyond the documented limit of every JSON body (common/responses.yaml: 65536 bytes), by far. */
const OVERSIZED_BYTES = 1024 * 1024;
/** notifyUrl values that break one destination rule each, whatever the development setting. */
export const REFUSED_DESTINATIONS: ReadonlyArray<[string, string]> = [
  ['https://10.20.30.40/payouts/completed', 'a private address'],
  ['https://169.254.10.20/payouts/completed', 'a link-local address'],
  ['https://merchant:secret@203.0.113.10/payouts/completed', 'credentials in the URL'],
  ['https://203.0.113.10/payouts/completed#done', 'a fragment'],
  ['https://[2001:db8::10]/payouts/completed', 'an IPv6 literal'],
];

type Json = Record<string, unknown>;

export interface ErrorChecksOptions {
  operations: readonly ApiOperation[];
  state: ApiState;
  client: ApiClient;
  creds: KeyCredentials;
  /** A key of the same tenant environment with no permission. */
  limited?: { apiKey: string; apiHash: string };
  skipStateful: boolean;
}

export function errorChecks(o: ErrorChecksOptions): Check[] {
  return [...o.operations.flatMap((op) => operationErrorChecks(op, o)), ...errorRowChecks(o)];
}

function operationErrorChecks(op: ApiOperation, o: ErrorChecksOptions): Check[] {
  const checks: Check[] = [];
  const check = (id: string, title: string, rules: ApiRule[], run: (ctx: CheckContext) => Promise<CheckOutcome>): void => {
    checks.push(defineCheck({ book: API, id: `${op.spec.operationId}.${id}`, title: `${describeOperation(op)}: ${title}`, group: `${op.api} ${op.spec.operationId}`, rules, run: (ctx) => guard(() => run(ctx)) }));
  };

  if (op.spec.requestBody) {
    const raw = async (label: string, rawBody: NonNullable<ApiRequest['rawBody']>, ctx: CheckContext): Promise<ApiResponse> => {
      const auth = await o.state.authFor(op);
      const parts = await prepareRequest(o.state, op, `body/${label}`, 'negative');
      return o.client.call(op, { auth, ...(parts.path ? { path: parts.path } : {}), ...(parts.query ? { query: parts.query } : {}), ...(parts.headers ? { headers: parts.headers } : {}), rawBody, label }, ctx.signal);
    };
    const valid = async (label: string): Promise<Buffer> => Buffer.from(JSON.stringify((await prepareRequest(o.state, op, `body/${label}/valid`, 'negative')).body ?? {}), 'utf8');
    check('body.not-json', 'a valid body sent as text/plain gets 415 unsupported-media-type', [JSON_BODY_RULE, answerRule(op.spec.operationId, 415, 'unsupported-media-type')], async (ctx) => {
      if (o.skipStateful) return skip('--skip-stateful: a mock answers its documented examples, not the media-type rule');
      const res = await raw('text/plain body', { contentType: 'text/plain; charset=utf-8', bytes: await valid('not-json') }, ctx);
      return judgeProblem(op, res, { status: 415, slug: 'unsupported-media-type' }, JSON_BODY_RULE);
    });
    check('body.malformed-json', 'a body that is not well-formed JSON gets 400 malformed-json', [JSON_BODY_RULE, answerRule(op.spec.operationId, 400, 'malformed-json')], async (ctx) => {
      if (o.skipStateful) return skip('--skip-stateful: a mock answers its documented examples, not the malformed-json rule');
      const whole = await valid('malformed');
      const res = await raw('truncated JSON', { contentType: 'application/json', bytes: whole.subarray(0, Math.max(1, whole.length - 1)) }, ctx);
      return judgeProblem(op, res, { status: 400, slug: 'malformed-json' }, JSON_BODY_RULE);
    });
    check('body.too-large', `a body of ${OVERSIZED_BYTES} bytes gets 413 payload-too-large`, [JSON_BODY_RULE, answerRule(op.spec.operationId, 413, 'payload-too-large')], async (ctx) => {
      if (o.skipStateful) return skip('--skip-stateful: a mock answers its documented examples, not the size limit');
      const bytes = Buffer.from(`{"padding":"${'x'.repeat(OVERSIZED_BYTES - 14)}"}`, 'utf8');
      const res = await raw('oversized body', { contentType: 'application/json', bytes }, ctx);
      return judgeProblem(op, res, { status: 413, slug: 'payload-too-large' }, JSON_BODY_RULE);
    });
  }

  const usesKeys = op.spec.security.some((s) => 'ApiKey' in s || 'ApiHash' in s);
  if (op.spec.permission && usesKeys) {
    // The seed's own row is GET /transactions/users; every other operation is PRODUCT.md's rule.
    const rule: ApiRule = op.spec.operationId === 'listUserTransactions' ? { ...PERMISSION_RULE, covers: ['interface#errors-permission', 'product#permissions'] } : PERMISSION_RULE;
    check('auth.permission-denied', `a key without the ${op.spec.permission} permission gets 403 permission-denied`, [rule, answerRule(op.spec.operationId, 403, 'permission-denied')], async (ctx) => {
      if (o.skipStateful) return skip('--skip-stateful: a mock cannot tell one key from another');
      if (!o.limited) return skip('needs --limited-api-key and --limited-api-hash (a key of the tenant environment with no permission)');
      const parts = await prepareRequest(o.state, op, 'permission-denied', 'negative');
      const auth: Auth = { kind: 'key', apiKey: o.limited.apiKey, apiHash: o.limited.apiHash };
      const res = await o.client.call(op, { auth, ...parts, label: `a key without ${op.spec.permission}` }, ctx.signal);
      return judgeProblem(op, res, { status: 403, slug: 'permission-denied' }, rule);
    });
  }
  return checks;
}

function errorRowChecks(o: ErrorChecksOptions): Check[] {
  const checks: Check[] = [];
  const s = o.state;
  const key: Auth = s.keyAuth();
  const tenant = { 'x-tenant-id': o.creds.tenantId };
  const check = (id: string, title: string, rules: ApiRule[], needs: string[], run: (ctx: CheckContext, evidence: Exchange[]) => Promise<CheckOutcome>): void => {
    if (!needs.every((n) => s.hasOp(n))) return;
    checks.push(defineCheck({ book: API, id: `rules.${id}`, title, group: GROUP, rules, run: statefulRun(o.skipStateful, run) }));
  };
  const call = async (evidence: Exchange[], operationId: string, req: ApiRequest, ctx: CheckContext): Promise<ApiResponse> => {
    const res = await o.client.call(s.op(operationId), req, ctx.signal);
    evidence.push(res.exchange);
    return res;
  };
  /** An id of the same shape as `like` that names nothing. */
  const unknownId = (like: string, ctx: CheckContext, label: string): string => {
    for (let i = 0; i < 8; i++) {
      const v = draw(sameShape(like), subSeed(ctx.seed, `unknown/${label}/${i}`));
      if (v !== like) return v;
    }
    return `${like}0`;
  };
  const expect2xx = (operationId: string, res: ApiResponse, evidence: Exchange[], what: string): CheckOutcome | null => {
    const v = judgeSuccess(s.op(operationId), res, evidence);
    if (v.status === 'passed') return null;
    if (v.status === 'failed') return fail(`${what}: ${v.failure.message}`, v.failure.rule, evidence);
    throw new Unavailable(`${what}: ${v.status === 'not_implemented' ? v.reason : 'skipped'}`, evidence);
  };

  check('tenant-header-required', 'GET /transactions without x-tenant-id gets 400 validation-failed naming the header', [TENANT_HEADER_REQUIRED_RULE], ['searchTransaction'], async (ctx, evidence) => {
    const paid = await s.paidOrder();
    const op = s.op('searchTransaction');
    const res = await call(evidence, 'searchTransaction', { auth: key, query: { txHash: paid.txHash }, label: 'a search of an existing payment, without x-tenant-id' }, ctx);
    const v = judgeProblem(op, res, { status: 400, slug: 'validation-failed' }, TENANT_HEADER_REQUIRED_RULE, evidence);
    if (v.status !== 'passed') return v;
    // The pointer's location prefix for headers is not fixed by the contract; the name is.
    const errors = (res.json as { errors?: unknown }).errors;
    const pointers = Array.isArray(errors) ? errors.map((e) => (isObj(e) ? e.pointer : undefined)).filter((p): p is string => typeof p === 'string') : [];
    if (!pointers.some((p) => /\/x-tenant-id$/i.test(p))) {
      return fail(`the validation-failed problem does not name x-tenant-id in errors (it names ${pointers.join(', ') || 'nothing'})`, TENANT_HEADER_REQUIRED_RULE, evidence);
    }
    return pass();
  });

  check('insufficient-funds', 'a payout the wallet cannot cover gets 422 insufficient-funds and creates nothing', [INSUFFICIENT_FUNDS_RULE, answerRule('createPayout', 422, 'insufficient-funds')], ['createPayout', 'getSandboxWallet', 'listUserTransactions'], async (ctx, evidence) => {
    await s.sandbox();
    const wallet = await call(evidence, 'getSandboxWallet', { auth: key, label: 'read the wallet balance' }, ctx);
    const bad = expect2xx('getSandboxWallet', wallet, evidence, 'the wallet could not be read');
    if (bad) return bad;
    const balance = Number((wallet.json as Json).balance);
    const op = s.op('createPayout');
    const parts = await prepareRequest(s, op, 'insufficient-funds', 'success');
    const body = { ...(parts.body as Json) };
    delete body.notifyUrl;
    const amount = Math.floor(balance) + 1;
    if (!Number.isFinite(amount) || amount > 1e12) return skip(`the wallet holds ${String((wallet.json as Json).balance)}, more than the largest payout amount`);
    body.amount = amount;
    const res = await call(evidence, 'createPayout', { auth: key, ...parts, body, label: `a payout of ${amount}, one more than the balance` }, ctx);
    const v = judgeProblem(op, res, { status: 422, slug: 'insufficient-funds' }, INSUFFICIENT_FUNDS_RULE, evidence);
    if (v.status !== 'passed') return v;
    const listed = await call(evidence, 'listUserTransactions', { auth: key, query: { userId: String(body.userId) }, headers: tenant, label: 'the user has no new transaction' }, ctx);
    if (Array.isArray(listed.json) && listed.json.some((r) => isObj(r) && r.amount === amount)) {
      return fail('the refused payout was written anyway: the user lists a transaction of its amount', INSUFFICIENT_FUNDS_RULE, evidence);
    }
    return pass();
  });

  check('refund-unknown-account', 'a refund to an e-mail that no service account has gets 422 unknown-refund-account; the payment stays refundable', [REFUND_ACCOUNT_UNCHANGED_RULE, answerRule('refundPayment', 422, 'unknown-refund-account')], ['refundPayment', 'createSandboxPayment'], async (ctx, evidence) => {
    await s.sandbox();
    const payment = await s.payment(true);
    const op = s.op('refundPayment');
    const email = `nobody-${subSeed(ctx.seed, 'refund/unknown-account').toString(36)}@unknown-refund.example`;
    const res = await call(evidence, 'refundPayment', { auth: key, headers: tenant, body: { txId: payment.transactionId, email }, label: 'refund to an unknown e-mail' }, ctx);
    const v = judgeProblem(op, res, { status: 422, slug: 'unknown-refund-account' }, REFUND_ACCOUNT_RULE, evidence);
    if (v.status !== 'passed') return v;
    const listed = await call(evidence, 'listUserTransactions', { auth: key, query: { userId: payment.userId, transactionId: payment.transactionId }, headers: tenant, label: 'the payment is still pending_confirmation' }, ctx);
    const record = Array.isArray(listed.json) ? listed.json.find((r) => isObj(r) && r.id === payment.transactionId) : undefined;
    if (isObj(record) && record.status !== 'pending_confirmation') return fail(`after the refused refund the payment reads ${JSON.stringify(record.status)}`, REFUND_ACCOUNT_RULE, evidence);
    return pass();
  });

  check('refund-unknown-transaction', 'a refund of an unknown txId gets 404 not-found', [REFUND_ACCOUNT_RULE, answerRule('refundPayment', 404, 'not-found')], ['refundPayment', 'createSandboxPayment'], async (ctx, evidence) => {
    await s.sandbox();
    const payment = await s.payment(false);
    const res = await call(evidence, 'refundPayment', { auth: key, headers: tenant, body: { txId: unknownId(payment.transactionId, ctx, 'refund'), email: s.refundEmail() }, label: 'refund an unknown transaction' }, ctx);
    return judgeProblem(s.op('refundPayment'), res, { status: 404, slug: 'not-found' }, REFUND_ACCOUNT_RULE, evidence);
  });

  check('revoke-unknown-transaction', 'revoking an unknown transaction gets 404 not-found', [REVOKE_RULE, answerRule('revokeStakingPayout', 404, 'not-found')], ['revokeStakingPayout', 'createStakingPayout'], async (ctx, evidence) => {
    const staking = await s.staking(false);
    const res = await call(evidence, 'revokeStakingPayout', { auth: key, headers: tenant, body: { transactionId: unknownId(staking.transactionId, ctx, 'revoke') }, label: 'revoke an unknown transaction' }, ctx);
    return judgeProblem(s.op('revokeStakingPayout'), res, { status: 404, slug: 'not-found' }, REVOKE_RULE, evidence);
  });

  check('revoke-not-active', 'revoking a staking payout twice, or a payout, gets 409 not-revocable', [REVOKE_NOT_ACTIVE_RULE, answerRule('revokeStakingPayout', 409, 'not-revocable')], ['revokeStakingPayout', 'createStakingPayout', 'createPayout'], async (ctx, evidence) => {
    const op = s.op('revokeStakingPayout');
    const staking = await s.staking(true);
    const revoke = (transactionId: string, label: string): Promise<ApiResponse> => call(evidence, 'revokeStakingPayout', { auth: key, headers: tenant, body: { transactionId }, label }, ctx);
    const first = await revoke(staking.transactionId, 'revoke an active staking payout');
    const bad = expect2xx('revokeStakingPayout', first, evidence, 'revoking an active staking payout failed');
    if (bad) return bad;
    const again = judgeProblem(op, await revoke(staking.transactionId, 'revoke it again'), { status: 409, slug: 'not-revocable' }, REVOKE_RULE, evidence);
    if (again.status !== 'passed') return again;
    const payout = await s.payout(false);
    return judgeProblem(op, await revoke(payout.transactionId, 'revoke a payout'), { status: 409, slug: 'not-revocable' }, REVOKE_RULE, evidence);
  });

  check('search-not-found', 'GET /transactions for a txHash and an orderNumber that match nothing gets 404 not-found', [SEARCH_NO_MATCH_RULE, answerRule('searchTransaction', 404, 'not-found')], ['searchTransaction'], async (ctx, evidence) => {
    const paid = await s.paidOrder();
    const op = s.op('searchTransaction');
    const byHash = await call(evidence, 'searchTransaction', { auth: key, headers: tenant, query: { txHash: unknownId(paid.txHash, ctx, 'txHash') }, label: 'an unknown txHash' }, ctx);
    const v = judgeProblem(op, byHash, { status: 404, slug: 'not-found' }, NOT_FOUND_RULE, evidence);
    if (v.status !== 'passed') return v;
    const byNumber = await call(evidence, 'searchTransaction', { auth: key, headers: tenant, query: { orderNumber: unknownId(paid.orderNumber, ctx, 'orderNumber') }, label: 'an unknown orderNumber' }, ctx);
    return judgeProblem(op, byNumber, { status: 404, slug: 'not-found' }, NOT_FOUND_RULE, evidence);
  });

  check('order-not-found', 'an unknown orderId gets 404 not-found on GET /v2/orders/{orderId} and on its payments', [NOT_FOUND_RULE, answerRule('getOrder', 404, 'not-found'), answerRule('listOrderPayments', 404, 'not-found')], ['getOrder', 'createOrder'], async (ctx, evidence) => {
    const order = await s.order(false);
    const orderId = unknownId(order.orderId, ctx, 'order');
    const v = judgeProblem(s.op('getOrder'), await call(evidence, 'getOrder', { auth: key, path: { orderId }, label: 'an unknown order' }, ctx), { status: 404, slug: 'not-found' }, NOT_FOUND_RULE, evidence);
    if (v.status !== 'passed' || !s.hasOp('listOrderPayments')) return v;
    return judgeProblem(s.op('listOrderPayments'), await call(evidence, 'listOrderPayments', { auth: key, path: { orderId }, label: 'the payments of an unknown order' }, ctx), { status: 404, slug: 'not-found' }, NOT_FOUND_RULE, evidence);
  });

  check('notify-url-destination', 'a payout whose notifyUrl breaks a destination rule gets 400 destination-not-allowed and creates nothing', [{ ...DESTINATION_RULE, covers: [...(DESTINATION_RULE.covers ?? []), 'createPayout#notify-url-destination'] }, answerRule('createPayout', 400, 'destination-not-allowed')], ['createPayout'], async (ctx, evidence) => {
    await s.sandbox();
    const op = s.op('createPayout');
    const parts = await prepareRequest(s, op, 'notify-url', 'success');
    for (const [url, what] of REFUSED_DESTINATIONS) {
      const res = await call(evidence, 'createPayout', { auth: key, ...parts, body: { ...(parts.body as Json), notifyUrl: url }, label: `notifyUrl with ${what}` }, ctx);
      const v = judgeProblem(op, res, { status: 400, slug: 'destination-not-allowed' }, DESTINATION_RULE, evidence);
      if (v.status !== 'passed') return v.status === 'failed' ? fail(`notifyUrl ${url} (${what}): ${v.failure.message}`, v.failure.rule, evidence) : v;
    }
    // Nothing was half-written: the same thirdPartyId is still free.
    const body = { ...(parts.body as Json) };
    delete body.notifyUrl;
    const after = await call(evidence, 'createPayout', { auth: key, ...parts, body, label: 'the same thirdPartyId without notifyUrl' }, ctx);
    const bad = expect2xx('createPayout', after, evidence, 'after the refusals, the same payout without notifyUrl');
    return bad ?? pass();
  });

  check('endpoint-exists', 'a second active webhook endpoint at the URL of an active one gets 409 endpoint-exists', [ENDPOINT_EXISTS_RULE, answerRule('createWebhookEndpoint', 409, 'endpoint-exists')], ['createWebhookEndpoint'], async (ctx, evidence) => {
    const e = await s.endpoint();
    const auth = await s.managementAuth();
    const op = s.op('createWebhookEndpoint');
    // Its URL now: other checks may have edited it (or, on a broken implementation, disabled it).
    const read = await call(evidence, 'getWebhookEndpoint', { auth, path: { endpointId: e.id }, label: `read ${e.id}` }, ctx);
    const current = isObj(read.json) ? read.json : {};
    if (current.active !== true || typeof current.url !== 'string') return skip(`the suite's endpoint ${e.id} is no longer active; nothing to collide with`);
    const res = await call(evidence, 'createWebhookEndpoint', { auth, body: { url: current.url }, label: `another endpoint at the URL of ${e.id}, which is active` }, ctx);
    return judgeProblem(op, res, { status: 409, slug: 'endpoint-exists' }, ENDPOINT_EXISTS_RULE, evidence);
  });

  return checks;
}
