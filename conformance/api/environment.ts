// `api.<operationId>.tenant.other-environment` (issue 67), generated from the contract: every
// operation with an `environment` query parameter and a documented 403 tenant-mismatch (the
// management API) is sent with the API key and each environment other than the key's own
// (the api target's key is a test key): the answer is 403 tenant-mismatch, never the other
// environment's records nor an action on them. A new management operation gets its check with
// no edit here.
import type { Check } from '../core/check.ts';
import { answerRules } from '../core/contract-rules.ts';
import { MANAGEMENT_API } from '../core/coverage.ts';
import { defineCheck } from '../core/define.ts';
import type { ApiClient } from '../core/openapi/client.ts';
import type { ApiOperation } from '../core/openapi/contract.ts';
import { describeOperation, problemSlug } from '../core/openapi/contract.ts';
import { isObj } from '../core/openapi/schema.ts';
import { describeAnswer } from '../core/openapi/answer.ts';
import { pass, skip } from '../core/outcome.ts';
import { statefulRun } from './checks.ts';
import { prepareRequest } from './fixtures.ts';
import { API, type ApiRule } from './rules.ts';
import type { ApiState } from './state.ts';
import { judgeProblem } from './verdict.ts';

/** The environment of the api target's key (its --api-key is a test key). */
const KEY_ENVIRONMENT = 'test';

export interface EnvironmentChecksOptions {
  operations: readonly ApiOperation[];
  state: ApiState;
  client: ApiClient;
  skipStateful: boolean;
}

/** The values of `op`'s `environment` query parameter other than the key's own. */
function otherEnvironments(op: ApiOperation): string[] {
  const param = op.spec.parameters.find((p) => p.in === 'query' && p.name === 'environment');
  const values = Array.isArray(param?.schema.enum) ? param.schema.enum : [];
  return values.filter((v): v is string => typeof v === 'string' && v !== KEY_ENVIRONMENT);
}

export function environmentChecks(o: EnvironmentChecksOptions): Check[] {
  return o.operations.flatMap((op) => {
    const opId = op.spec.operationId;
    const covers = answerRules(opId, 403, 'tenant-mismatch');
    const others = otherEnvironments(op);
    if (covers.length < 2 || others.length === 0) return [];
    const rule: ApiRule = {
      source: `${MANAGEMENT_API}#/components/parameters/Environment`,
      quote: "With an API key, the key's own environment when omitted; any other value is 403 (tenant-mismatch).",
      covers,
    };
    return [
      defineCheck({
        book: API,
        id: `${opId}.tenant.other-environment`,
        title: `${describeOperation(op)}: the API key with environment=${others.join('|')} (not the key's) gets 403 tenant-mismatch`,
        group: `${op.api} ${opId}`,
        rules: [rule],
        run: statefulRun(o.skipStateful, async (ctx, evidence) => {
          // The fixtures' ids (created with the management credentials) make a request that
          // would succeed in the key's own environment: only the environment is wrong.
          const parts = await prepareRequest(o.state, op, 'other-environment', 'negative');
          for (const environment of others) {
            const res = await o.client.call(op, { auth: o.state.keyAuth(), ...parts, query: { ...parts.query, environment }, label: `the API key with environment=${environment}` }, ctx.signal);
            evidence.push(res.exchange);
            if (res.status === 403 && problemSlug(isObj(res.json) ? res.json.type : undefined) === 'permission-denied') return skip(`the API key cannot manage webhooks (answered ${describeAnswer(res)}); give it webhooks_manage for this check`);
            const v = judgeProblem(op, res, { status: 403, slug: 'tenant-mismatch' }, rule, evidence);
            if (v.status !== 'passed') return v;
          }
          return pass();
        }),
      }),
    ];
  });
}
