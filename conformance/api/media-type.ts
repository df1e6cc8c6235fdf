// Equivalent spellings of the request media type. "Request bodies must be application/json":
// by HTTP's definition of a media type (RFC 9110 § 8.3.1) its type and subtype are
// case-insensitive and parameters may follow, so `Application/JSON; charset=utf-8` is
// application/json. An implementation that compares the header as a string refuses it with 415.
// One operation (createOrder, whose success creates nothing a later check depends on) stands
// for all: the media type is handled before any operation's logic.
import type { Check, Exchange } from '../core/check.ts';
import { defineCheck } from '../core/define.ts';
import { guard } from './checks.ts';
import type { ApiClient } from '../core/openapi/client.ts';
import { prepareRequest } from './fixtures.ts';
import { API, MEDIA_TYPE_RULE } from './rules.ts';
import type { ApiState } from './state.ts';
import { fail, pass, skip } from '../core/outcome.ts';
import { judgeSuccess } from './verdict.ts';

const SPELLINGS = ['application/json; charset=utf-8', 'Application/JSON'] as const;

export function mediaTypeChecks(o: { state: ApiState; client: ApiClient; skipStateful: boolean }): Check[] {
  if (!o.state.hasOp('createOrder')) return [];
  const op = o.state.op('createOrder');
  return [
    defineCheck({
      book: API,
      id: 'createOrder.body.json-media-type-forms',
      title: `POST ${op.spec.path}: a JSON body sent as ${SPELLINGS.join(' or as ')} is accepted like application/json`,
      group: `${op.api} ${op.spec.operationId}`,
      rules: [MEDIA_TYPE_RULE],
      run: (ctx) =>
        guard(async () => {
          if (o.skipStateful) return skip('--skip-stateful: a mock answers its documented examples, not the media-type rule');
          const evidence: Exchange[] = [];
          for (const contentType of SPELLINGS) {
            const parts = await prepareRequest(o.state, op, `media-type/${contentType}`, 'success');
            const bytes = Buffer.from(JSON.stringify(parts.body), 'utf8');
            const res = await o.client.call(op, { auth: await o.state.authFor(op), ...parts, rawBody: { contentType, bytes }, label: `Content-Type: ${contentType}` }, ctx.signal);
            evidence.push(res.exchange);
            const verdict = judgeSuccess(op, res, evidence);
            if (verdict.status === 'failed') return fail(`a valid body sent with Content-Type: ${contentType}: ${verdict.failure.message}`, MEDIA_TYPE_RULE, evidence);
            if (verdict.status !== 'passed') return verdict;
          }
          return pass();
        }),
    }),
  ];
}
