// The checks of every documented operation, derived from the OpenAPI documents:
// - succeeds: a valid request (examples + the state it needs) gets a documented success with a
//   body valid against the response schema and the documented content type;
// - auth.*: missing credentials, a missing x-api-hash, a wrong x-api-hash, an unknown key, an
//   unknown member token (where member tokens are accepted) get 401 unauthenticated;
// - tenant.other-tenant: another tenant's x-tenant-id gets 403 tenant-mismatch (where the
//   operation declares the header);
// - invalid.*: one check per constraint of every body field and path/query parameter
//   (invalid.ts) gets 400 validation-failed naming the field.
// Every refusal must be a documented 4xx of the operation, application/problem+json, valid
// against Problem, with a type of common/problem-types.yaml; never a 5xx.
import type { Check, CheckContext, CheckOutcome, Exchange, SpecRule } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import { subSeed } from '../core/seed.ts';
import type { ApiClient, Auth, KeyCredentials } from '../core/openapi/client.ts';
import { describeOperation, operationRule } from '../core/openapi/contract.ts';
import type { ApiOperation } from '../core/openapi/contract.ts';
import { SIDE_EFFECTS, prepareRequest } from './fixtures.ts';
import { invalidCases } from './invalid.ts';
import type { InvalidCase } from './invalid.ts';
import { draw, sameShape } from '../core/openapi/requests.ts';
import { API, AUTH_RULE, DECIMAL_RULE, MEMBER_AUTH_RULE, STAKING_ASSET_RULE, STAKING_OTHER_ASSET_RULE, STATUS_RULE, TENANT_HEADER_RULE, VALIDATION_RULE, answerRule, infoRule } from './rules.ts';
import type { ApiRule } from './rules.ts';
import { clone } from '../core/openapi/schema.ts';
import { Unavailable } from './state.ts';
import type { ApiState } from './state.ts';
import { skip } from '../core/outcome.ts';
import { judgeProblem, judgeSuccess } from './verdict.ts';

export const TARGET = 'api';

export interface OperationChecksOptions {
  operations: readonly ApiOperation[];
  state: ApiState;
  client: ApiClient;
  creds: KeyCredentials;
  /** Another tenant's id for the tenant-mismatch checks (default: a generated id of the same shape). */
  otherTenantId?: string;
  skipStateful: boolean;
}

const MOCK_CANNOT = '--skip-stateful: a mock cannot tell';

export function operationChecks(opts: OperationChecksOptions): Check[] {
  return opts.operations.flatMap((op) => checksOf(op, opts));
}

function checksOf(op: ApiOperation, o: OperationChecksOptions): Check[] {
  const group = `${op.api} ${op.spec.operationId}`;
  const base = `${TARGET}.${op.spec.operationId}`;
  const name = describeOperation(op);
  const checks: Check[] = [];
  const check = (id: string, title: string, rules: ApiRule[], run: (ctx: CheckContext) => Promise<CheckOutcome>): void => {
    checks.push(defineCheck({ book: API, id: `${op.spec.operationId}.${id}`, title: `${name}: ${title}`, group, rules, run: (ctx) => guard(() => run(ctx)) }));
  };

  // ---- a valid request succeeds -------------------------------------------------------------
  check('succeeds', `a valid request gets ${op.successStatuses.join('/')} with a body valid against its schema`, [operationRule(op, 'success response'), STATUS_RULE, ...op.successStatuses.map((s) => answerRule(op.spec.operationId, s))], async (ctx) => {
    const side = SIDE_EFFECTS[op.spec.operationId];
    const notes = side ? [`side effect: ${side}`] : [];
    if (op.spec.operationId === 'createWebhookEndpoint' && !o.skipStateful) {
      // The suite's endpoint is made here, once, and used by the other management checks.
      const e = await o.state.endpoint();
      if (!e.created) return skip('the environment already has an active webhook endpoint (409 endpoint-exists); the suite does not disable an endpoint it did not create');
      return withNotes(judgeSuccess(op, e.created.res), notes);
    }
    const auth = await o.state.authFor(op);
    const parts = await prepareRequest(o.state, op, 'succeeds', 'success');
    const res = await o.client.call(op, { auth, ...parts, label: 'valid request' }, ctx.signal);
    return withNotes(judgeSuccess(op, res), notes);
  });

  // ---- authentication -------------------------------------------------------------------------
  const usesKeys = op.spec.security.some((s) => 'ApiKey' in s || 'ApiHash' in s);
  if (usesKeys) {
    const auth = (id: string, title: string, stateful: boolean, make: (ctx: CheckContext) => Auth): void => {
      check(`auth.${id}`, `${title} gets 401 unauthenticated`, [op.allowsMemberToken ? MEMBER_AUTH_RULE : AUTH_RULE, answerRule(op.spec.operationId, 401, 'unauthenticated')], async (ctx) => {
        if (stateful && o.skipStateful) return skip(`${MOCK_CANNOT} a wrong credential from a right one`);
        const parts = await prepareRequest(o.state, op, `auth/${id}`, 'negative');
        const res = await o.client.call(op, { auth: make(ctx), ...parts, label: title }, ctx.signal);
        return judgeProblem(op, res, { status: 401, slug: 'unauthenticated' }, op.allowsMemberToken ? MEMBER_AUTH_RULE : AUTH_RULE);
      });
    };
    auth('no-credentials', 'a request without credentials', false, () => ({ kind: 'none' }));
    auth('missing-hash', 'a request with x-api-key but no x-api-hash', false, () => ({ kind: 'key', apiKey: o.creds.apiKey }));
    auth('wrong-hash', 'a request with a wrong x-api-hash', true, (ctx) => ({
      kind: 'key',
      apiKey: o.creds.apiKey,
      apiHash: other(o.creds.apiHash, subSeed(ctx.seed, `${base}/wrong-hash`)),
    }));
    auth('unknown-key', 'a request with an unknown x-api-key', true, (ctx) => ({
      kind: 'key',
      apiKey: other(o.creds.apiKey, subSeed(ctx.seed, `${base}/unknown-key`)),
      apiHash: o.creds.apiHash,
    }));
    if (op.allowsMemberToken) {
      auth('unknown-member-token', 'a request with an unknown member token', true, (ctx) => ({
        kind: 'bearer',
        token: draw(sameShape('mt_Q2hhbmdlTWVfVGhpc19Jc19Bbl9FeGFtcGxlX1Rva2Vu'), subSeed(ctx.seed, `${base}/member-token`)),
      }));
    }
  }

  // ---- tenant ---------------------------------------------------------------------------------
  if (op.declaresTenantHeader) {
    check('tenant.other-tenant', "another tenant's x-tenant-id gets 403 tenant-mismatch", [TENANT_HEADER_RULE, answerRule(op.spec.operationId, 403, 'tenant-mismatch'), infoRule(op.api, 'tenant-mismatch', 'x-tenant-id, when present, must be the tenant of the key (403 tenant-mismatch)')], async (ctx) => {
      if (o.skipStateful) return skip(`${MOCK_CANNOT} one tenant from another`);
      const auth = await o.state.authFor(op);
      const parts = await prepareRequest(o.state, op, 'tenant', 'negative');
      const otherTenant = o.otherTenantId ?? other(o.creds.tenantId, subSeed(ctx.seed, `${base}/tenant`));
      const res = await o.client.call(op, { auth, ...parts, headers: { ...parts.headers, 'x-tenant-id': otherTenant }, label: "another tenant's x-tenant-id" }, ctx.signal);
      return judgeProblem(op, res, { status: 403, slug: 'tenant-mismatch' }, TENANT_HEADER_RULE);
    });
  }

  // ---- invalid requests -------------------------------------------------------------------------
  for (const c of invalidCases(op)) {
    const rules = [c.kind === 'too-precise' ? DECIMAL_RULE : VALIDATION_RULE, operationRule(op, `schema of ${c.pointer}`), ...(c.kind === 'unknown-field' ? [infoRule(op.api, 'closed-request-bodies', 'Request bodies are closed: an unknown field is a 400')] : []), ...(c.pointer === '/body/asset' ? [STAKING_ASSET_RULE, ...(c.kind === 'unknown-enum' ? [STAKING_OTHER_ASSET_RULE] : [])] : []), answerRule(op.spec.operationId, 400, 'validation-failed')];
    check(`invalid.${c.key}`, `refuses ${c.what} with 400 validation-failed`, rules, (ctx) => runInvalid(op, c, o, ctx, `${base}.invalid.${c.key}`, rules[0] as SpecRule));
  }
  return checks;
}

async function runInvalid(op: ApiOperation, c: InvalidCase, o: OperationChecksOptions, ctx: CheckContext, id: string, rule: SpecRule): Promise<CheckOutcome> {
  if (o.skipStateful && c.customKeyword) return skip(`${MOCK_CANNOT} values the contract's x-decimal keyword refuses`);
  const auth = await o.state.authFor(op);
  if (op.api === 'management' && auth.kind === 'key' && c.location === 'query' && c.pointer === '/query/environment') {
    return skip('with an API key, any environment other than the key\'s own is a 403 tenant-mismatch by contract, not a 400; give --member-token to check this one');
  }
  const base = await prepareRequest(o.state, op, `invalid/${c.key}`, 'negative');
  const seed = subSeed(ctx.seed, id);
  // The contract's own validator confirms the request is invalid where the case says.
  for (let i = 0; i < 8; i++) {
    const parts = c.apply(base, (seed + i * 104_729) >>> 0);
    const { issues } = op.compiled.validateRequest({ path: parts.path, query: parts.query, headers: parts.headers, body: clone(parts.body) });
    if (!issues.some((x) => x.pointer === c.pointer || x.pointer.startsWith(`${c.pointer}/`))) continue;
    const res = await o.client.call(op, { auth, ...parts, label: c.what }, ctx.signal);
    return judgeProblem(op, res, { status: 400, slug: 'validation-failed', pointer: c.pointer }, rule);
  }
  return skip(`no value drawn for ${c.what} was invalid under the schema (nothing to send)`);
}

/** A value of the same shape as `value` and different from it. */
function other(value: string, seed: number): string {
  for (let i = 0; i < 8; i++) {
    const v = draw(sameShape(value), (seed + i) >>> 0);
    if (v !== value) return v;
  }
  return `${value}x`;
}

function withNotes(outcome: CheckOutcome, notes: string[]): CheckOutcome {
  if (notes.length === 0 || outcome.status === 'not_implemented') return outcome;
  return { ...outcome, notes: [...(outcome.notes ?? []), ...notes] } as CheckOutcome;
}

/** The run of a rule about state: skipped under --skip-stateful, else guarded like every api check. */
export function statefulRun(skipStateful: boolean, run: (ctx: CheckContext, evidence: Exchange[]) => Promise<CheckOutcome>): (ctx: CheckContext) => Promise<CheckOutcome> {
  return (ctx) =>
    guard(async () => {
      if (skipStateful) return skip('--skip-stateful: a rule about state, which a mock does not keep');
      return run(ctx, []);
    });
}

/** Runs a check body; a missing fixture or capability becomes a skip with its reason. */
export async function guard(run: () => Promise<CheckOutcome>): Promise<CheckOutcome> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof Unavailable) {
      const notes = err.exchanges.map((x) => `${x.label ?? 'exchange'}: ${x.request.method} ${x.request.url} → ${x.response.status ?? x.response.error ?? 'no answer'}`);
      return skip(err.message, notes);
    }
    throw err;
  }
}

