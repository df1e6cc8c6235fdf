// The sandbox write fault on every write operation (issue 67), generated from the contract:
// each POST/PATCH of the APIs the fault arms (Transactions, v2 order, sandbox: not management)
// that documents 503 (504) gets `api.<operationId>.fault.store-unavailable`
// (`.fault.outcome-unknown`). With the fault armed, a read is answered as usual (only the next
// write takes the fault), then the operation's valid request (fresh fixtures) must be answered
// 503 store-unavailable (504 outcome-unknown) as the contract writes it: application/problem+json
// valid against Problem, its `status` the HTTP status, and every header the answer documents
// (Retry-After) valid against its schema. Nothing is written on a 503; a 504's write is stored
// (on its own fresh fixtures); the fault is disarmed after each check whatever happened.
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { createSuiteAjv } from '../core/ajv.ts';
import { isContractRule } from '../core/contract-rules.ts';
import { defineCheck } from '../core/define.ts';
import type { ApiClient, ApiResponse, KeyCredentials } from '../core/openapi/client.ts';
import type { ApiOperation } from '../core/openapi/contract.ts';
import { describeOperation, problemSlug } from '../core/openapi/contract.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { fail, pass, skip } from '../core/outcome.ts';
import { statefulRun } from './checks.ts';
import { prepareRequest } from './fixtures.ts';
import { API, LOST_COMMIT_RULE, STORE_UNAVAILABLE_RULE, answerRule, type ApiRule } from './rules.ts';
import type { ApiState } from './state.ts';
import { routeMissing } from './verdict.ts';

const FAULT_OP = 'injectSandboxWriteFault';
const WRITES = new Set(['post', 'patch', 'put', 'delete']);
/** "the next POST or PATCH with a key of this environment (Transactions API, v2 order API or sandbox; this operation aside)" */
const FAULTED_APIS = new Set(['transactions', 'orders', 'sandbox']);
const headerAjv = createSuiteAjv({ coerce: true });

export interface WriteFaultChecksOptions {
  operations: readonly ApiOperation[];
  state: ApiState;
  client: ApiClient;
  skipStateful: boolean;
}

const NEXT_WRITE_RULE: ApiRule = {
  covers: ['injectSandboxWriteFault#next-write-only'],
  source: 'sandbox.openapi.yaml#/paths/~1sandbox~1faults~1next-write/post',
  quote: "Arms a fault for the next write of the caller's test environment: the next POST or PATCH with a key of this environment (this operation aside).",
};

/** What is wrong with a 5xx answer of `op` that should be `status` `slug`, or null. */
export function faultAnswerProblems(op: ApiOperation, res: ApiResponse, status: number, slug: string): string[] {
  if (res.status !== status) return [`answered ${describeAnswer(res)}, not ${status} ${slug}`];
  const problems = [...op.compiled.validateResponse(status, res.contentType, res.json)];
  const body = (res.json ?? {}) as { type?: unknown; status?: unknown };
  if (problemSlug(body.type) !== slug) problems.push(`the problem type is ${JSON.stringify(body.type)}, not ${slug}`);
  if (body.status !== res.status) problems.push(`the problem's status ${JSON.stringify(body.status)} is not the HTTP status ${res.status}`);
  const documented = op.spec.responses.find((r) => r.status === String(status))?.headers ?? {};
  for (const [name, schema] of Object.entries(documented)) {
    const value = res.exchange.response.headers[name];
    if (value === undefined) problems.push(`the ${name} header is missing`);
    else if (!headerAjv.validate(schema, value)) problems.push(`${name}: ${JSON.stringify(value)} is not valid against its documented schema ${JSON.stringify(schema)}`);
  }
  return problems;
}

/** The faults the sandbox arms, the answer each gives, and the product rule it rehearses. */
const FAULTS = [
  { fault: 'store-unavailable', status: 503, rule: STORE_UNAVAILABLE_RULE },
  { fault: 'outcome-unknown', status: 504, rule: LOST_COMMIT_RULE },
] as const;
type Fault = (typeof FAULTS)[number];

export function writeFaultChecks(o: WriteFaultChecksOptions): Check[] {
  const s = o.state;
  if (!s.hasOp(FAULT_OP) || !s.hasOp('getSandboxWallet')) return [];
  const writes = o.operations.filter((op) => WRITES.has(op.spec.method) && FAULTED_APIS.has(op.api) && op.spec.operationId !== FAULT_OP);
  return FAULTS.flatMap((f) =>
    writes
      .filter((op) => isContractRule(`${op.spec.operationId}#status-${f.status}`))
      .map((op) =>
        defineCheck({
          book: API,
          id: `${op.spec.operationId}.fault.${f.fault}`,
          title: `${describeOperation(op)} with ${f.fault} armed (sandbox): a read first is answered as usual, then the write ${f.status} ${f.fault} with its problem and Retry-After as documented`,
          group: `${op.api} ${op.spec.operationId}`,
          rules: [f.rule, NEXT_WRITE_RULE, answerRule(op.spec.operationId, f.status, f.fault)],
          run: statefulRun(o.skipStateful, (ctx, evidence) => disarmed(o, ctx, () => judgeFault(o, op, f, ctx, evidence))),
        }),
      ),
  );
}

async function arm(o: WriteFaultChecksOptions, fault: string, ctx: CheckContext, evidence: Exchange[]): Promise<ApiResponse> {
  const op = o.state.op(FAULT_OP);
  const res = await o.client.call(op, { auth: await o.state.authFor(op), body: { fault }, label: `arm ${fault} for the next write (sandbox)` }, ctx.signal);
  evidence.push(res.exchange);
  return res;
}

/** Runs a check that arms the fault, and disarms it after, whatever happened (the run's other writes stay clean). */
async function disarmed(o: WriteFaultChecksOptions, ctx: CheckContext, run: () => Promise<CheckOutcome>): Promise<CheckOutcome> {
  try {
    return await run();
  } finally {
    await arm(o, 'none', ctx, []).catch(() => undefined);
  }
}

async function judgeFault(o: WriteFaultChecksOptions, op: ApiOperation, f: Fault, ctx: CheckContext, evidence: Exchange[]): Promise<CheckOutcome> {
  // The request and the state it needs first: creating fixtures is writing.
  const parts = await prepareRequest(o.state, op, `fault/${f.fault}`, 'success');
  const armed = await arm(o, f.fault, ctx, evidence);
  const missing = routeMissing(armed);
  if (missing) return skip(`the implementation does not offer the sandbox write fault (POST /sandbox/faults/next-write ${missing})`);
  if (armed.status !== 200) return fail(`arming ${f.fault} was answered ${describeAnswer(armed)}`, NEXT_WRITE_RULE, evidence);
  const wallet = o.state.op('getSandboxWallet');
  const read = await o.client.call(wallet, { auth: o.state.keyAuth(), label: 'a read while the fault is armed' }, ctx.signal);
  evidence.push(read.exchange);
  if (read.status !== 200) return fail(`with the fault armed, a read (GET /sandbox/wallet) was answered ${describeAnswer(read)}: only the next write takes it`, NEXT_WRITE_RULE, evidence);
  // With the API key: the fault is armed for the next write with a key of the environment (a member token's write does not take it).
  const res = await o.client.call(op, { auth: o.state.keyAuth(), ...parts, label: 'the write that takes the fault' }, ctx.signal);
  evidence.push(res.exchange);
  if (res.status !== null && res.status >= 400 && res.status < 500) {
    return skip(`the suite's request was refused before it was written (${describeAnswer(res)}), so it could not take the fault`);
  }
  const problems = faultAnswerProblems(op, res, f.status, f.fault);
  return problems.length > 0 ? fail(problems.join('; '), answerRule(op.spec.operationId, f.status, f.fault), evidence) : pass();
}

const REFUSED_RULE: ApiRule = {
  covers: ['injectSandboxWriteFault#refused-write-keeps-fault'],
  source: 'sandbox.openapi.yaml#/paths/~1sandbox~1faults~1next-write/post',
  quote: 'A write refused before it is stored (a 4xx) answers as usual and leaves the fault armed.',
};
const USED_ONCE_RULE: ApiRule = {
  covers: ['injectSandboxWriteFault#used-once'],
  source: 'sandbox.openapi.yaml#/paths/~1sandbox~1faults~1next-write/post',
  quote: 'The fault is used by one write, then gone; arming again replaces an armed one, and none disarms it.',
};
const OWN_ENVIRONMENT_RULE: ApiRule = {
  covers: ['injectSandboxWriteFault#own-environment'],
  source: 'sandbox.openapi.yaml#/paths/~1sandbox~1faults~1next-write/post',
  quote: 'It is kept in the serving process\'s memory (a restart clears it) and never touches another environment.',
};

export interface FaultRuleChecksOptions extends WriteFaultChecksOptions {
  /** Another tenant's key, for the fault's environment. */
  other?: KeyCredentials;
}

/**
 * The fault's own rules, on POST /v2/orders (each order request a fresh Idempotency-Key):
 * a refused write leaves it armed, the write that takes it is the only one, and another
 * tenant environment's write never takes it.
 */
export function faultRuleChecks(o: FaultRuleChecksOptions): Check[] {
  const s = o.state;
  if (!s.hasOp(FAULT_OP) || !s.hasOp('createOrder')) return [];
  const order = s.op('createOrder');
  const check = (id: string, title: string, rule: ApiRule, run: (ctx: CheckContext, evidence: Exchange[]) => Promise<CheckOutcome>): Check =>
    defineCheck({ book: API, id: `rules.fault.${id}`, title, group: 'stateful rules', rules: [rule], run: statefulRun(o.skipStateful, (ctx, evidence) => disarmed(o, ctx, () => run(ctx, evidence))) });
  let n = 0;
  /** An order with a fresh Idempotency-Key, as this tenant or as `as` (its key and its x-tenant-id). */
  const sendOrder = async (ctx: CheckContext, evidence: Exchange[], label: string, change: (body: Record<string, unknown>) => Record<string, unknown> = (b) => b, as?: KeyCredentials): Promise<ApiResponse> => {
    const parts = await prepareRequest(s, order, `fault-rules/${label}`, 'success');
    const key = `conformance-fault-${Date.now().toString(36)}-${++n}`;
    const tenant: Record<string, string> = as && parts.headers?.['x-tenant-id'] !== undefined ? { 'x-tenant-id': as.tenantId } : {};
    const auth = as ? { kind: 'key' as const, apiKey: as.apiKey, apiHash: as.apiHash } : s.keyAuth();
    const res = await o.client.call(order, { auth, ...parts, headers: { ...parts.headers, ...tenant, 'idempotency-key': key }, body: change(parts.body as Record<string, unknown>), label }, ctx.signal);
    evidence.push(res.exchange);
    return res;
  };
  const armOrSkip = async (ctx: CheckContext, evidence: Exchange[]): Promise<CheckOutcome | null> => {
    const armed = await arm(o, 'store-unavailable', ctx, evidence);
    const missing = routeMissing(armed);
    if (missing) return skip(`the implementation does not offer the sandbox write fault (POST /sandbox/faults/next-write ${missing})`);
    return armed.status === 200 ? null : fail(`arming store-unavailable was answered ${describeAnswer(armed)}`, NEXT_WRITE_RULE, evidence);
  };
  return [
    check('refused-write-keeps-fault', 'with store-unavailable armed, an order refused 400 (an unknown field) leaves the fault armed: the next valid order is answered 503', REFUSED_RULE, async (ctx, evidence) => {
      const not = await armOrSkip(ctx, evidence);
      if (not) return not;
      const refused = await sendOrder(ctx, evidence, 'an order with an unknown field', (b) => ({ ...b, conformanceUnknownField: true }));
      if (refused.status !== 400) return fail(`an order with an unknown field, the fault armed, was answered ${describeAnswer(refused)}, not 400 validation-failed`, REFUSED_RULE, evidence);
      const next = await sendOrder(ctx, evidence, 'the next valid order');
      return next.status === 503 ? pass() : fail(`after a refused write, the next valid order was answered ${describeAnswer(next)}: the refused write must leave the fault armed (503 store-unavailable)`, REFUSED_RULE, evidence);
    }),
    check('used-once', 'with store-unavailable armed, one order takes the fault (503); the next order is created (201)', USED_ONCE_RULE, async (ctx, evidence) => {
      const not = await armOrSkip(ctx, evidence);
      if (not) return not;
      const first = await sendOrder(ctx, evidence, 'the order that takes the fault');
      if (first.status !== 503) return fail(`with the fault armed, an order was answered ${describeAnswer(first)}, not 503 store-unavailable`, USED_ONCE_RULE, evidence);
      const second = await sendOrder(ctx, evidence, 'the next order');
      return second.status === 201 ? pass() : fail(`the order after the one that took the fault was answered ${describeAnswer(second)}, not 201: the fault is used by one write`, USED_ONCE_RULE, evidence);
    }),
    check('own-environment', "with store-unavailable armed, another tenant's order is created (201); this tenant's next order still takes the fault (503)", OWN_ENVIRONMENT_RULE, async (ctx, evidence) => {
      if (!o.other) return skip('needs the credentials of a second tenant: --other-api-key, --other-api-hash and --other-tenant-id');
      const not = await armOrSkip(ctx, evidence);
      if (not) return not;
      const theirs = await sendOrder(ctx, evidence, "the other tenant's order", (b) => b, o.other);
      if (theirs.status !== 201) return fail(`another tenant's order, this tenant's fault armed, was answered ${describeAnswer(theirs)}, not 201: the fault never touches another environment`, OWN_ENVIRONMENT_RULE, evidence);
      const mine = await sendOrder(ctx, evidence, "this tenant's order");
      return mine.status === 503 ? pass() : fail(`this tenant's order after the other tenant's was answered ${describeAnswer(mine)}, not 503: the other environment's write took this environment's fault`, OWN_ENVIRONMENT_RULE, evidence);
    }),
  ];
}
