// Round five of the broken API servers (issue 51): the retry after a lost commit and the
// recovery window. Each is the real app behind one Hono middleware (wrap.ts) with one defect,
// caught by the api target's check meant for it and no other. `withoutWriteFaults` is not a
// mutant: an implementation that does not offer the sandbox write fault, whose lost-commit
// checks must be reported as not reached (conformance-tests/api.test.ts).
import type { Context } from 'hono';
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import type { AppEnv } from '../../../server/http/app-env.ts';
import { wrapApp, type Inner } from './wrap.ts';
import type { ServerMutant } from './mutant.ts';

const FAULTS = '/sandbox/faults/next-write';
type Json = Record<string, unknown>;

/** `c`'s request sent to the real app with another JSON body and headers. */
async function forward(c: Context<AppEnv>, inner: Inner, body: Json, headers: Record<string, string> = {}): Promise<Response> {
  const text = JSON.stringify(body);
  const h = new Headers(c.req.raw.headers);
  for (const [k, v] of Object.entries(headers)) h.set(k, v);
  h.set('content-length', String(Buffer.byteLength(text)));
  return inner(new Request(c.req.url, { method: c.req.method, headers: h, body: text }));
}

const readJson = (c: Context<AppEnv>): Promise<Json | null> => c.req.raw.clone().json().then((j: unknown) => (j !== null && typeof j === 'object' ? (j as Json) : null), () => null);

/** After a 504 outcome-unknown, the same request (same Idempotency-Key, same thirdPartyId) creates a second record. */
function createdAgain(path: string, identity: (c: Context<AppEnv>, body: Json) => string | undefined, change: (body: Json, headers: Record<string, string>) => void) {
  return (services: Services, config: Config): BuiltApp => {
    const lost = new Set<string>();
    return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
      if (c.req.method !== 'POST' || c.req.path !== path) return next();
      const body = await readJson(c);
      const id = body === null ? undefined : identity(c, body);
      if (body === null || id === undefined) return next();
      if (lost.has(id)) {
        const headers: Record<string, string> = {};
        change(body, headers);
        c.res = await forward(c, inner, body, headers); // the defect: the retry is a new write
        return;
      }
      await next();
      if (c.res.status === 504) lost.add(id);
    });
  };
}

const lostOrderCreatedAgain = createdAgain('/v2/orders', (c) => c.req.header('idempotency-key'), (_b, h) => void (h['idempotency-key'] = `${crypto.randomUUID()}`));
const lostPayoutCreatedAgain = createdAgain('/transactions/payout', (_c, b) => (typeof b.thirdPartyId === 'string' ? b.thirdPartyId : undefined), (b) => void (b.thirdPartyId = `${String(b.thirdPartyId)}-again`));

/** store-unavailable is armed as outcome-unknown and its 504 answered as 503: the "nothing written" write was stored. */
function unavailableWroteAnyway(services: Services, config: Config): BuiltApp {
  let rewrite = false;
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    if (c.req.method === 'POST' && c.req.path === FAULTS) {
      const body = await readJson(c);
      rewrite = body?.fault === 'store-unavailable';
      if (!rewrite || body === null) return next();
      const res = await forward(c, inner, { fault: 'outcome-unknown' });
      c.res = Response.json({ ...((await res.json()) as Json), fault: 'store-unavailable' }, { status: res.status });
      return;
    }
    await next();
    if (rewrite && c.res.status === 504) {
      rewrite = false;
      const status = 503; // the defect: it was written
      c.res = Response.json({ type: 'https://errors.payments.example/store-unavailable', title: 'Service temporarily unavailable', status, detail: 'Nothing was written.' }, { status, headers: { 'content-type': 'application/problem+json', 'retry-after': '5' } });
    }
  });
}

const RECOVER = /^\/v2\/webhooks\/endpoints\/[^/]+\/recover$/;

/** A recover window whose until is not later than since is answered 202 (until dropped) instead of 400. */
function recoverWindowUnchecked(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    if (c.req.method !== 'POST' || !RECOVER.test(c.req.path)) return next();
    const body = await readJson(c);
    const [since, until] = [Date.parse(String(body?.since)), Date.parse(String(body?.until))];
    if (Number.isNaN(since) || Number.isNaN(until) || until > since) return next();
    const { until: _until, ...rest } = body!;
    c.res = await forward(c, inner, rest); // the defect
  });
}

/** The event stream's first message loses its id: it opens with the comment alone, no position. */
function streamOpensWithoutPosition(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    await next();
    if (c.req.path !== '/v2/events/stream' || c.res.status !== 200 || c.res.body === null) return;
    let head = '';
    let opened = false;
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    const dropOpeningId = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        if (opened) return out.enqueue(chunk);
        head += decoder.decode(chunk, { stream: true });
        const end = head.indexOf('\n\n');
        if (end < 0) return;
        opened = true;
        const first = head.slice(0, end).split('\n').filter((line) => !line.startsWith('id:')); // the defect
        out.enqueue(encoder.encode(`${first.join('\n')}\n\n${head.slice(end + 2)}`));
      },
    });
    c.res = new Response(c.res.body.pipeThrough(dropOpeningId), { status: c.res.status, headers: c.res.headers });
  });
}

/** Not a mutant: the sandbox write fault is not offered (404 route-not-found). */
export function withoutWriteFaults(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    if (c.req.path !== FAULTS) return next();
    const status = 404;
    c.res = Response.json({ type: 'https://errors.payments.example/route-not-found', title: 'Route not found', status, detail: `No operation at ${c.req.method} ${c.req.path}.` }, { status, headers: { 'content-type': 'application/problem+json' } });
  });
}

const only = (id: string): RegExp => new RegExp(`^${id.replace(/\./g, '\\.')}$`);

export const ROUND_FIVE_API_MUTANTS: readonly ServerMutant[] = [
  { name: 'lost-order-created-again', defect: 'after a 504 outcome-unknown, the same Idempotency-Key creates a second order', target: 'api', build: lostOrderCreatedAgain, mustFail: ['api.rules.lost-commit.order'], failsOnly: only('api.rules.lost-commit.order') },
  { name: 'lost-payout-created-again', defect: 'after a 504 outcome-unknown, the same thirdPartyId creates a second payout', target: 'api', build: lostPayoutCreatedAgain, mustFail: ['api.rules.lost-commit.payout'], failsOnly: only('api.rules.lost-commit.payout') },
  { name: 'unavailable-wrote-anyway', defect: 'a 503 store-unavailable answers a write that was stored', target: 'api', build: unavailableWroteAnyway, mustFail: ['api.rules.store-unavailable.nothing-written'], failsOnly: only('api.rules.store-unavailable.nothing-written') },
  { name: 'stream-opens-without-position', defect: "the event stream's first message carries no id (no position to resume from)", target: 'api', build: streamOpensWithoutPosition, mustFail: ['api.rules.stream.opening-position'], failsOnly: only('api.rules.stream.opening-position') },
  { name: 'recover-window-unchecked', defect: 'recover answers 202 to a window whose until is not later than since', target: 'api', build: recoverWindowUnchecked, mustFail: ['api.rules.recover.until-after-since'], failsOnly: only('api.rules.recover.until-after-since') },
];
