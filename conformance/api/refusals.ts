// The 409 refusals of a resource's state (issue 67), each judged as a problem (a documented
// status, its `status` the HTTP status, the stable type) and by a read afterwards showing that
// nothing was written:
//   rules.refusal.endpoint-inactive       a disabled endpoint: edit, re-enable, rotate, test, recover
//   rules.refusal.delivery-not-retryable  a delivery that is not failed: retry
//   rules.refusal.order-not-open          a cancelled order: sandbox deposit, review, cancel
//   rules.refusal.not-settleable          a settled payout: settle again
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { answerRules, type ContractRuleId } from '../core/contract-rules.ts';
import { MANAGEMENT_API } from '../core/coverage.ts';
import { defineCheck } from '../core/define.ts';
import type { ApiResponse, Auth } from '../core/openapi/client.ts';
import type { RequestParts } from '../core/openapi/requests.ts';
import type { ProblemSlug } from '../core/openapi/contract.ts';
import { isObj } from '../core/openapi/schema.ts';
import { fail, pass } from '../core/outcome.ts';
import { statefulRun } from './checks.ts';
import { endpointScope } from './endpoints.ts';
import { API, type ApiRule } from './rules.ts';
import type { StatefulChecksOptions } from './stateful.ts';
import { judgeProblem, judgeSuccess } from './verdict.ts';

const SANDBOX_API = 'sandbox.openapi.yaml';

const refusalRule = (source: string, quote: string, operations: readonly string[], slug: string, written: readonly ContractRuleId[] = []): ApiRule => ({
  source,
  quote,
  covers: [...operations.flatMap((op): ContractRuleId[] => answerRules(op, 409, slug)), ...written],
});

const INACTIVE_OPS = ['updateWebhookEndpoint', 'rotateWebhookSecret', 'sendTestWebhook', 'recoverDeliveries'] as const;
const INACTIVE_RULE = refusalRule(`${MANAGEMENT_API}#/paths/~1v2~1webhooks~1endpoints~1{endpointId}~1rotate-secret/post`, 'The endpoint is disabled (endpoint-inactive); a disabled endpoint cannot be changed, rotated, tested or re-enabled.', INACTIVE_OPS, 'endpoint-inactive', ['management#disabled-refuses-changes']);
const RETRY_RULE = refusalRule(`${MANAGEMENT_API}#/paths/~1v2~1webhooks~1deliveries~1{deliveryId}~1retry/post`, 'The delivery is not failed, or the environment has no active endpoint (delivery-not-retryable). Nothing was changed.', ['retryDelivery'], 'delivery-not-retryable', ['retryDelivery#only-failed']);
const ORDER_OPS = ['createSandboxDeposit', 'markSandboxOrderForReview', 'cancelSandboxOrder'] as const;
const ORDER_RULE = refusalRule(`${SANDBOX_API}#/paths/~1sandbox~1orders~1{orderId}~1deposits/post`, 'An order that is not open (order-not-open) answers 409; nothing is written.', ORDER_OPS, 'order-not-open', ['createSandboxDeposit#cancelled-takes-no-deposit']);
const SETTLE_RULE = refusalRule(`${SANDBOX_API}#/paths/~1sandbox~1payouts~1{transactionId}~1settle/post`, 'A transaction that is not a pending payout (already settled, or another type) answers 409 (not-settleable) and is left unchanged.', ['settleSandboxPayout'], 'not-settleable', ['settleSandboxPayout#settled-once']);

export function refusalChecks(o: StatefulChecksOptions): Check[] {
  const s = o.state;
  const check = (id: string, title: string, rule: ApiRule, needs: readonly string[], run: ReturnType<typeof statefulRun>): Check[] =>
    needs.every((n) => s.hasOp(n)) ? [defineCheck({ book: API, id: `rules.refusal.${id}`, title, group: 'stateful rules', rules: [rule], run })] : [];
  const call = async (evidence: Exchange[], operationId: string, auth: Auth, parts: Partial<RequestParts>, label: string, ctx: CheckContext): Promise<ApiResponse> => {
    const res = await o.client.call(s.op(operationId), { auth, ...parts, label }, ctx.signal);
    evidence.push(res.exchange);
    return res;
  };
  /** A step that must succeed: null when it did, else the outcome that ends the check. */
  const succeeded = (operationId: string, res: ApiResponse, evidence: Exchange[], rule: ApiRule, what: string): CheckOutcome | null => {
    const v = judgeSuccess(s.op(operationId), res, evidence);
    return v.status === 'passed' ? null : v.status === 'failed' ? fail(`${what}: ${v.failure.message}`, rule, evidence) : v;
  };
  /** Each refusal in turn, judged as the 409 problem; the first that is not ends the check. */
  const refused = async (attempts: ReadonlyArray<[string, () => Promise<ApiResponse>]>, slug: ProblemSlug, rule: ApiRule, evidence: Exchange[]): Promise<CheckOutcome | null> => {
    for (const [operationId, send] of attempts) {
      const v = judgeProblem(s.op(operationId), await send(), { status: 409, slug }, rule, evidence);
      if (v.status !== 'passed') return v;
    }
    return null;
  };

  return [
    ...check('endpoint-inactive', 'a disabled endpoint: an edit of its URL, a rotation, a test and a recovery each get 409 endpoint-inactive; the endpoint reads the same after', INACTIVE_RULE, [...INACTIVE_OPS, 'getWebhookEndpoint'], endpointScope(o)(async (ctx, evidence, add) => {
      const auth = await s.managementAuth();
      const made = await add('inactive');
      const bad = succeeded('createWebhookEndpoint', made, evidence, INACTIVE_RULE, 'an endpoint could not be created');
      if (bad || !isObj(made.json)) return bad ?? fail('the created endpoint has no body', INACTIVE_RULE, evidence);
      const path = { endpointId: String(made.json.id) };
      const url = String(made.json.url);
      const off = succeeded('updateWebhookEndpoint', await call(evidence, 'updateWebhookEndpoint', auth, { path, body: { active: false } }, 'disable it', ctx), evidence, INACTIVE_RULE, 'the endpoint could not be disabled');
      if (off) return off;
      const read = (label: string): Promise<ApiResponse> => call(evidence, 'getWebhookEndpoint', auth, { path }, label, ctx);
      const before = await read('the disabled endpoint');
      const recover = s.exampleRequest(s.op('recoverDeliveries'), 'refusal/recover');
      const v = await refused([
        ['updateWebhookEndpoint', () => call(evidence, 'updateWebhookEndpoint', auth, { path, body: { url: `${url}-edited` } }, 'edit its URL', ctx)],
        ['rotateWebhookSecret', () => call(evidence, 'rotateWebhookSecret', auth, { path }, 'rotate its secret', ctx)],
        ['sendTestWebhook', () => call(evidence, 'sendTestWebhook', auth, { path }, 'send it a test webhook', ctx)],
        ['recoverDeliveries', () => call(evidence, 'recoverDeliveries', auth, { ...recover, path }, 'recover its deliveries', ctx)],
      ], 'endpoint-inactive', INACTIVE_RULE, evidence);
      if (v) return v;
      const after = await read('the endpoint after the refusals');
      if (JSON.stringify(after.json) !== JSON.stringify(before.json)) return fail(`the refusals changed the disabled endpoint: ${before.exchange.response.body} became ${after.exchange.response.body}`, INACTIVE_RULE, evidence);
      return pass();
    })),

    ...check('delivery-not-retryable', 'a retry of a delivery that is not failed (a test delivery) gets 409 delivery-not-retryable; its cycle is unchanged', RETRY_RULE, ['retryDelivery', 'getDelivery', 'sendTestWebhook'], statefulRun(o.skipStateful, async (ctx, evidence) => {
      const auth = await s.managementAuth();
      const path = { deliveryId: (await s.testDelivery()).id };
      const before = await call(evidence, 'getDelivery', auth, { path }, 'the test delivery', ctx);
      const was = isObj(before.json) ? before.json : {};
      if (was.state === 'failed') return fail('a test delivery to the --webhook-url failed; the check needs one that is not failed', RETRY_RULE, evidence);
      const v = await refused([['retryDelivery', () => call(evidence, 'retryDelivery', auth, { path }, 'retry it', ctx)]], 'delivery-not-retryable', RETRY_RULE, evidence);
      if (v) return v;
      const after = await call(evidence, 'getDelivery', auth, { path }, 'the delivery after the refusal', ctx);
      const now = isObj(after.json) ? after.json : {};
      if (now.cycle !== was.cycle) return fail(`the refused retry started a new cycle: ${String(was.cycle)} became ${String(now.cycle)}`, RETRY_RULE, evidence);
      return pass();
    })),

    ...check('order-not-open', 'a cancelled order: a sandbox deposit, a review and a cancel each get 409 order-not-open; it has no payment after', ORDER_RULE, [...ORDER_OPS, 'listOrderPayments'], statefulRun(o.skipStateful, async (ctx, evidence) => {
      await s.sandbox();
      const key = s.keyAuth();
      const path = { orderId: (await s.order(true)).orderId };
      const cancel = () => call(evidence, 'cancelSandboxOrder', key, { path }, 'cancel the order', ctx);
      const bad = succeeded('cancelSandboxOrder', await cancel(), evidence, ORDER_RULE, 'an open order could not be cancelled');
      if (bad) return bad;
      const request = (operationId: string): RequestParts => ({ ...s.exampleRequest(s.op(operationId), 'refusal/order'), path });
      const v = await refused([
        ['createSandboxDeposit', () => call(evidence, 'createSandboxDeposit', key, request('createSandboxDeposit'), 'a deposit to the cancelled order', ctx)],
        ['markSandboxOrderForReview', () => call(evidence, 'markSandboxOrderForReview', key, request('markSandboxOrderForReview'), 'mark it for review', ctx)],
        ['cancelSandboxOrder', cancel],
      ], 'order-not-open', ORDER_RULE, evidence);
      if (v) return v;
      const payments = await call(evidence, 'listOrderPayments', key, { path }, 'the payments of the cancelled order', ctx);
      const data = isObj(payments.json) && Array.isArray(payments.json.data) ? payments.json.data : [];
      if (data.length > 0) return fail(`the refused deposit was written: the cancelled order lists ${data.length} payment(s)`, ORDER_RULE, evidence);
      return pass();
    })),

    ...check('not-settleable', 'settling a payout settled as cancelled gets 409 not-settleable; it stays cancelled', SETTLE_RULE, ['settleSandboxPayout', 'createPayout', 'listUserTransactions'], statefulRun(o.skipStateful, async (ctx, evidence) => {
      await s.sandbox();
      const key = s.keyAuth();
      const payout = await s.payout(true);
      const settle = (status: string, label: string) => call(evidence, 'settleSandboxPayout', key, { path: { transactionId: payout.transactionId }, body: { status } }, label, ctx);
      // Cancelled returns the amount to the wallet: the check spends nothing.
      const bad = succeeded('settleSandboxPayout', await settle('cancelled', 'settle the payout as cancelled'), evidence, SETTLE_RULE, 'a pending payout could not be settled');
      if (bad) return bad;
      const v = await refused([['settleSandboxPayout', () => settle('success', 'settle it again, as success')]], 'not-settleable', SETTLE_RULE, evidence);
      if (v) return v;
      const query = { userId: payout.userId, transactionId: payout.transactionId };
      const listed = await call(evidence, 'listUserTransactions', key, { query, headers: { 'x-tenant-id': s.options.creds.tenantId } }, 'the payout after the refusal', ctx);
      const record = Array.isArray(listed.json) ? listed.json.find((r) => isObj(r) && r.id === payout.transactionId) : undefined;
      if (!isObj(record) || record.status !== 'cancelled') return fail(`after the refused settlement the payout reads ${isObj(record) ? JSON.stringify(record.status) : 'nothing'}; it stays cancelled`, SETTLE_RULE, evidence);
      return pass();
    })),
  ];
}
