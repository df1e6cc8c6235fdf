// An order's payment status through its documented transitions (issue 67), through the
// sandbox's deposits on one order: an unverified deposit changes nothing, a verified one below
// the expected amount makes it partially_paid, the rest makes it paid, a surplus keeps it paid
// with the excess in overpaymentBaseUnits. Each step is read back with GET /v2/orders/{orderId}.
// Before any deposit: the creation's answer is an open, unpaid order with what was sent.
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import type { ApiClient } from '../core/openapi/client.ts';
import { isObj } from '../core/openapi/schema.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { fail, pass, skip } from '../core/outcome.ts';
import { statefulRun } from './checks.ts';
import { API, type ApiRule } from './rules.ts';
import type { ApiState } from './state.ts';

const PAYMENT_STATUS_RULE: ApiRule = {
  covers: ['createSandboxDeposit#payment-status-transitions', 'createSandboxDeposit#unverified-changes-nothing', 'createSandboxDeposit#surplus-after-paid'],
  source: 'sandbox.openapi.yaml#/paths/~1sandbox~1orders~1{orderId}~1deposits/post',
  quote:
    'Unverified: recorded as a pending payment; it changes nothing else. Verified, not yet paid: the amount is added to receivedBaseUnits ... the payment state becomes paid when it covers the expected amountBaseUnits; below it, partially_paid. Verified, already paid: a surplus updates receivedBaseUnits and overpaymentBaseUnits.',
};

const ORDER_CREATED_RULE: ApiRule = {
  covers: ['createOrder#created-open', 'createOrder#answered-as-given'],
  source: 'orders.openapi.yaml#/paths/~1v2~1orders/post',
  quote:
    'The answer is the new order: status open, paymentStatus unpaid, receivedBaseUnits "0" and no payments. amountMinor is the order amount in USD cents. assetId, networkId and amountBaseUnits are optional and answered back as given. merchantReference is answered back as given.',
};

/** The fields of the creation's body the answer gives back as they were sent. */
const AS_GIVEN = ['amountMinor', 'merchantReference', 'assetId', 'networkId', 'amountBaseUnits'] as const;

interface Step {
  what: string;
  amountBaseUnits: bigint;
  verified: boolean;
  expect: { paymentStatus: string; receivedBaseUnits: bigint; overpaymentBaseUnits?: bigint };
}

export function paymentStatusChecks(o: { state: ApiState; client: ApiClient; skipStateful: boolean }): Check[] {
  const s = o.state;
  if (!s.hasOp('createSandboxDeposit') || !s.hasOp('getOrder') || !s.hasOp('createOrder')) return [];
  const run = async (ctx: CheckContext, evidence: Exchange[]): Promise<CheckOutcome> => {
    await s.sandbox();
    const order = await s.order(true);
    if (order.amountBaseUnits === undefined) return skip('the documented order example has no amountBaseUnits: no expected amount to pay in parts');
    const total = BigInt(order.amountBaseUnits);
    const half = total / 2n;
    const steps: Step[] = [
      { what: 'an unverified deposit of half', amountBaseUnits: half, verified: false, expect: { paymentStatus: 'unpaid', receivedBaseUnits: 0n } },
      { what: 'a verified deposit of half', amountBaseUnits: half, verified: true, expect: { paymentStatus: 'partially_paid', receivedBaseUnits: half } },
      { what: 'a verified deposit of the rest', amountBaseUnits: total - half, verified: true, expect: { paymentStatus: 'paid', receivedBaseUnits: total } },
      { what: 'a verified surplus of 1', amountBaseUnits: 1n, verified: true, expect: { paymentStatus: 'paid', receivedBaseUnits: total + 1n, overpaymentBaseUnits: 1n } },
    ];
    const deposit = s.op('createSandboxDeposit');
    const get = s.op('getOrder');
    for (const [i, step] of steps.entries()) {
      const example = s.exampleRequest(deposit, `payment-status/${i}`);
      const body = { ...(example.body as Record<string, unknown>), amountBaseUnits: step.amountBaseUnits.toString(), verified: step.verified };
      const res = await o.client.call(deposit, { auth: s.keyAuth(), path: { orderId: order.orderId }, body, label: step.what }, ctx.signal);
      evidence.push(res.exchange);
      if (res.status === null || res.status >= 300) return fail(`${step.what} was answered ${describeAnswer(res)}`, PAYMENT_STATUS_RULE, evidence);
      const read = await o.client.call(get, { auth: s.keyAuth(), path: { orderId: order.orderId }, label: `the order after ${step.what}` }, ctx.signal);
      evidence.push(read.exchange);
      const got = isObj(read.json) ? read.json : {};
      const wanted: Record<string, string> = { paymentStatus: step.expect.paymentStatus, receivedBaseUnits: step.expect.receivedBaseUnits.toString() };
      if (step.expect.overpaymentBaseUnits !== undefined) wanted.overpaymentBaseUnits = step.expect.overpaymentBaseUnits.toString();
      const wrong = Object.entries(wanted).filter(([k, v]) => got[k] !== v);
      if (wrong.length > 0) {
        return fail(`after ${step.what} of an order of ${total}, it reads ${wrong.map(([k, v]) => `${k} ${JSON.stringify(got[k])} (the contract: ${v})`).join(', ')}`, PAYMENT_STATUS_RULE, evidence);
      }
    }
    return pass();
  };
  const created = async (ctx: CheckContext, evidence: Exchange[]): Promise<CheckOutcome> => {
    const op = s.op('createOrder');
    const parts = s.exampleRequest(op, 'order-created');
    const res = await o.client.call(op, { auth: s.keyAuth(), ...parts, label: 'create an order' }, ctx.signal);
    evidence.push(res.exchange);
    if (res.status !== 201 || !isObj(res.json)) return fail(`creating an order was answered ${describeAnswer(res)}`, ORDER_CREATED_RULE, evidence);
    const got = res.json;
    const sent = isObj(parts.body) ? parts.body : {};
    const wanted: Record<string, unknown> = { status: 'open', paymentStatus: 'unpaid', receivedBaseUnits: '0' };
    for (const k of AS_GIVEN) if (k in sent) wanted[k] = sent[k];
    const wrong = Object.entries(wanted).filter(([k, v]) => got[k] !== v);
    if (Array.isArray(got.payments) && got.payments.length > 0) wrong.push(['payments', []]);
    if (wrong.length > 0) return fail(`the new order reads ${wrong.map(([k, v]) => `${k} ${JSON.stringify(got[k])} (the contract: ${JSON.stringify(v)})`).join(', ')}`, ORDER_CREATED_RULE, evidence);
    return pass();
  };
  return [
    defineCheck({
      book: API,
      id: 'rules.order-created-open',
      title: 'POST /v2/orders answers an open, unpaid order with receivedBaseUnits "0", no payments, and what was sent answered back as given',
      group: 'stateful rules',
      rules: [ORDER_CREATED_RULE],
      run: statefulRun(o.skipStateful, created),
    }),
    defineCheck({
      book: API,
      id: 'rules.payment-status.transitions',
      title: "an order's paymentStatus through its deposits: unverified (unpaid), half (partially_paid), the rest (paid), a surplus (paid, overpaymentBaseUnits)",
      group: 'stateful rules',
      rules: [PAYMENT_STATUS_RULE],
      run: statefulRun(o.skipStateful, run),
    }),
  ];
}
