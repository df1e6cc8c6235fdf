// Isolation on every operation that takes an id or a search (issue 67), generated from the
// contract: each operation with a `<operationId>#isolation` rule (generated/rules.ts: a path
// parameter, a required query parameter or x-required-one-of) gets
// `api.<operationId>.isolation.other-tenant`. The second tenant sends the operation with this
// tenant's ids (the fixtures' own) and again with unknown ids of the same shape: the two
// answers must be the same (status, problem type, and a success's body), and never a success
// of a write. A new operation with an id gets its check with no edit here.
import type { Check, CheckContext, CheckOutcome, Exchange } from '../core/check.ts';
import { answerRules, isContractRule, type ContractRuleId } from '../core/contract-rules.ts';
import { defineCheck } from '../core/define.ts';
import { subSeed } from '../core/seed.ts';
import type { ApiClient, ApiResponse, Auth, KeyCredentials } from '../core/openapi/client.ts';
import type { ApiOperation } from '../core/openapi/contract.ts';
import { describeOperation } from '../core/openapi/contract.ts';
import { draw, sameShape } from '../core/openapi/requests.ts';
import type { RequestParts } from '../core/openapi/requests.ts';
import { isObj } from '../core/openapi/schema.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { fail, pass, skip } from '../core/outcome.ts';
import { statefulRun } from './checks.ts';
import { prepareRequest } from './fixtures.ts';
import { API, ISOLATION_RULE, type ApiRule } from './rules.ts';
import { Unavailable } from './state.ts';
import { judgeProblem } from './verdict.ts';
import type { ApiState } from './state.ts';

export interface IsolationChecksOptions {
  operations: readonly ApiOperation[];
  state: ApiState;
  client: ApiClient;
  skipStateful: boolean;
  other?: KeyCredentials;
}

/** An id of the same shape as `like` that names nothing. */
function unknownLike(like: string, seed: number): string {
  for (let i = 0; i < 8; i++) {
    const v = draw(sameShape(like), (seed + i) >>> 0);
    if (v !== like) return v;
  }
  return `${like}0`;
}

/** The path ids and the search values the fixtures gave (those that differ from the documented example's). */
function ownValues(mine: RequestParts, example: RequestParts): { path: string[]; query: string[] } {
  const path = Object.keys(mine.path ?? {}).filter((k) => mine.path?.[k] !== example.path?.[k]);
  const query = Object.keys(mine.query ?? {}).filter((k) => mine.query?.[k] !== example.query?.[k]);
  return { path, query };
}

/** The same request with each of this tenant's values replaced by an unknown one. */
function withUnknowns(mine: RequestParts, own: { path: string[]; query: string[] }, seed: number): RequestParts {
  const swap = (values: Record<string, string> | undefined, keys: string[], where: string): Record<string, string> | undefined =>
    values && Object.fromEntries(Object.entries(values).map(([k, v]) => [k, keys.includes(k) ? unknownLike(v, subSeed(seed, `${where}/${k}`)) : v]));
  return { ...mine, ...(mine.path ? { path: swap(mine.path, own.path, 'path') } : {}), ...(mine.query ? { query: swap(mine.query, own.query, 'query') } : {}) };
}

const typeOf = (r: ApiResponse): unknown => (isObj(r.json) ? r.json.type : undefined);
const is2xx = (r: ApiResponse): boolean => r.status !== null && r.status >= 200 && r.status < 300;

/** Why the answer to this tenant's ids differs from the answer to unknown ones, or null. */
export function isolationBreach(op: ApiOperation, theirs: ApiResponse, unknown: ApiResponse): string | null {
  const write = op.spec.method !== 'get';
  if (write && is2xx(theirs)) return `the other tenant's ${op.spec.method.toUpperCase()} with this tenant's ids was answered ${describeAnswer(theirs)}: it acted on another tenant's resource`;
  if (theirs.status !== unknown.status || typeOf(theirs) !== typeOf(unknown)) {
    return `with this tenant's ids the other tenant was answered ${describeAnswer(theirs)}, with unknown ids ${describeAnswer(unknown)}: the difference tells it the resource exists`;
  }
  if (is2xx(theirs) && JSON.stringify(theirs.json) !== JSON.stringify(unknown.json)) {
    return `with this tenant's ids the other tenant was answered a body other than for unknown ids (${theirs.exchange.response.body.slice(0, 200)}): it sees this tenant's records`;
  }
  return null;
}

export function isolationChecks(o: IsolationChecksOptions): Check[] {
  return o.operations.flatMap((op) => {
    const id = `${op.spec.operationId}#isolation`;
    if (!isContractRule(id)) return [];
    const rule: ApiRule = { ...ISOLATION_RULE, covers: ['product#isolation', id as ContractRuleId] };
    return [
      defineCheck({
        book: API,
        id: `${op.spec.operationId}.isolation.other-tenant`,
        title: `${describeOperation(op)}: another tenant sending this tenant's ids is answered as for unknown ids`,
        group: `${op.api} ${op.spec.operationId}`,
        rules: [rule],
        run: statefulRun(o.skipStateful, (ctx, evidence) => judgeIsolation(o, op, rule, ctx, evidence)),
      }),
    ];
  });
}

async function judgeIsolation(o: IsolationChecksOptions, op: ApiOperation, rule: ApiRule, ctx: CheckContext, evidence: Exchange[]): Promise<CheckOutcome> {
  if (!o.other) throw new Unavailable('needs the credentials of a second tenant: --other-api-key, --other-api-hash and --other-tenant-id');
  const b = o.other;
  const mine = await prepareRequest(o.state, op, 'isolation', 'negative');
  const own = ownValues(mine, o.state.exampleRequest(op, 'isolation'));
  if (own.path.length + own.query.length === 0) return skip(`no id or search value of this tenant could be had for ${describeOperation(op)} (its fixture is unavailable)`);
  const auth: Auth = { kind: 'key', apiKey: b.apiKey, apiHash: b.apiHash };
  const headers = { ...mine.headers, ...(op.declaresTenantHeader ? { 'x-tenant-id': b.tenantId } : {}) };
  const send = async (parts: RequestParts, label: string): Promise<ApiResponse> => {
    const res = await o.client.call(op, { auth, ...parts, headers, label }, ctx.signal);
    evidence.push(res.exchange);
    return res;
  };
  const theirs = await send(mine, "the other tenant sends this tenant's ids");
  const unknown = await send(withUnknowns(mine, own, subSeed(ctx.seed, `${op.spec.operationId}/isolation`)), 'the other tenant sends unknown ids');
  if (op.api === 'management' && unknown.status === 403) return skip(`the other tenant's key cannot manage webhooks (answered ${describeAnswer(unknown)}); give it webhooks_manage for this check`);
  const breach = isolationBreach(op, theirs, unknown);
  return breach ? fail(breach, rule, evidence) : pass([`both answered ${describeAnswer(unknown)}`]);
}

/**
 * `api.<operationId>.unknown-id.not-found` for every operation that takes an id and documents
 * 404 not-found: this tenant's own request with each id replaced by an unknown one of the same
 * shape is answered 404 not-found (a documented problem, its `status` the HTTP status).
 */
export function unknownIdChecks(o: Omit<IsolationChecksOptions, 'other'>): Check[] {
  return o.operations.flatMap((op) => {
    const opId = op.spec.operationId;
    const covers = answerRules(opId, 404, 'not-found');
    if (covers.length < 2 || !op.spec.parameters.some((p) => p.in === 'path')) return [];
    const rule: ApiRule = { source: `the documented responses of ${opId}`, quote: '404 not-found', covers };
    return [
      defineCheck({
        book: API,
        id: `${opId}.unknown-id.not-found`,
        title: `${describeOperation(op)}: an unknown id gets 404 not-found`,
        group: `${op.api} ${opId}`,
        rules: [rule],
        run: statefulRun(o.skipStateful, async (ctx, evidence) => {
          const mine = await prepareRequest(o.state, op, 'unknown-id', 'negative');
          const own = { path: Object.keys(mine.path ?? {}), query: [] };
          const res = await o.client.call(op, { auth: await o.state.authFor(op), ...withUnknowns(mine, own, subSeed(ctx.seed, `${opId}/unknown-id`)), label: 'an unknown id' }, ctx.signal);
          evidence.push(res.exchange);
          return judgeProblem(op, res, { status: 404, slug: 'not-found' }, rule, evidence);
        }),
      }),
    ];
  });
}
