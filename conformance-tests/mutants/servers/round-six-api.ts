// Round six of the broken API servers (issue 67): the api-side rules that were left without a
// check. Each is the real app behind one Hono middleware (wrap.ts) with one defect, caught by
// the api target's checks meant for it and no other.
import type { Context } from 'hono';
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import type { AppEnv } from '../../../server/http/app-env.ts';
import { wrapApp, type Inner } from './wrap.ts';
import type { ServerMutant } from './mutant.ts';

type Json = Record<string, unknown>;
type Middleware = (inner: Inner) => (c: Context<AppEnv>, next: () => Promise<void>) => Promise<Response | void>;

/** A server whose middleware is made once per server (wrapApp calls the middleware per request): state lives in `make`'s closure. */
const mutant =
  (make: () => Middleware) =>
  (services: Services, config: Config): BuiltApp =>
    wrapApp(buildApp(services, config), make());

const problemOf = async (res: Response): Promise<string | null> => {
  if (!(res.headers.get('content-type') ?? '').includes('problem+json')) return null;
  const type = ((await res.clone().json()) as { type?: unknown }).type;
  return typeof type === 'string' ? type.slice(type.lastIndexOf('/') + 1) : null;
};

/** The same request to the real app, with another URL and (for a body) another JSON body. */
function resend(c: Context<AppEnv>, inner: Inner, url: string, body?: Json): Promise<Response> {
  const headers = new Headers(c.req.raw.headers);
  if (body === undefined) return inner(new Request(url, { method: c.req.method, headers, ...(c.req.method === 'GET' ? {} : { body: c.req.raw.clone().body, duplex: 'half' }) } as RequestInit));
  const text = JSON.stringify(body);
  headers.set('content-length', String(Buffer.byteLength(text)));
  return inner(new Request(url, { method: c.req.method, headers, body: text }));
}

/** A management request with an API key answers for the key's environment whatever `environment` says. */
const environmentIgnored: Middleware = (inner) => async (c, next) => {
  const url = new URL(c.req.url);
  if (!url.pathname.startsWith('/v2/webhooks/') || !c.req.header('x-api-key') || !url.searchParams.has('environment')) return next();
  url.searchParams.delete('environment'); // the defect
  c.res = await resend(c, inner, url.href);
};

/** A disabled endpoint's secret is rotated: its 409 endpoint-inactive is answered as the rotation it refused. */
const rotatesDisabledEndpoint: Middleware = () => async (c, next) => {
  await next();
  if (c.req.method !== 'POST' || !/^\/v2\/webhooks\/endpoints\/[^/]+\/rotate-secret$/.test(c.req.path) || (await problemOf(c.res)) !== 'endpoint-inactive') return;
  const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`;
  c.res = Response.json({ secret, previousSecretExpiresAt: new Date(Date.now() + 86_400_000).toISOString() }, { status: 200 }); // the defect
};

/** A settled payout settles again: its 409 not-settleable is answered with the first settlement's answer. */
const settlesTwice = (): Middleware => {
  const settled = new Map<string, string>();
  return () => async (c, next) => {
    await next();
    if (c.req.method !== 'POST' || !/^\/sandbox\/payouts\/[^/]+\/settle$/.test(c.req.path)) return;
    if (c.res.status === 200) settled.set(c.req.path, await c.res.clone().text());
    const first = settled.get(c.req.path);
    if (first === undefined || (await problemOf(c.res)) !== 'not-settleable') return;
    c.res = new Response(first, { status: 200, headers: { 'content-type': 'application/json' } }); // the defect
  };
};

/** The refusal `slug` of `path` answered as a success (the status given per method, an empty object): the rule is not applied. */
const acceptsRefusal =
  (path: RegExp, slug: string, statusByMethod: Readonly<Record<string, number>>): Middleware =>
  () =>
  async (c, next) => {
    await next();
    const status = statusByMethod[c.req.method];
    if (status !== undefined && path.test(c.req.path) && (await problemOf(c.res)) === slug) c.res = Response.json({}, { status }); // the defect
  };

/** listDeliveries answers every endpoint's deliveries: a valid `endpointId` is dropped. */
const endpointFilterIgnored: Middleware = (inner) => async (c, next) => {
  const url = new URL(c.req.url);
  if (c.req.method !== 'GET' || url.pathname !== '/v2/webhooks/deliveries' || !url.searchParams.has('endpointId')) return next();
  await next();
  if (c.res.status !== 200) return; // a valid endpointId only
  url.searchParams.delete('endpointId'); // the defect
  c.res = await resend(c, inner, url.href);
};

/** A live key on the sandbox is refused as a missing permission: the problem type is not the contract's. */
const liveKeyAsPermission: Middleware = () => async (c, next) => {
  await next();
  if (!c.req.path.startsWith('/sandbox/') || (await problemOf(c.res)) !== 'live-key-not-allowed') return;
  const status = 403;
  c.res = Response.json({ type: 'https://errors.payments.example/permission-denied', title: 'Permission denied', status, detail: 'This API key may not use the sandbox.' }, { status, headers: { 'content-type': 'application/problem+json' } }); // the defect
};

/** Any key arms the fault: a refused arming is made again with the credentials of the last one allowed. */
const armsForAnyKey = (): Middleware => {
  let allowed: Headers | null = null;
  return (inner) => async (c, next) => {
    if (c.req.method !== 'POST' || c.req.path !== '/sandbox/faults/next-write') return next();
    const body = await c.req.raw.clone().text();
    await next();
    if (c.res.status === 200) allowed = new Headers(c.req.raw.headers);
    if (allowed === null || (await problemOf(c.res)) !== 'permission-denied') return;
    c.res = await inner(new Request(c.req.url, { method: 'POST', headers: allowed, body })); // the defect
  };
};

/**
 * One server with several of the defects above, each on its own paths and problem types: every
 * check of the set must fail, each by its own defect's answer. (One server per set, not per
 * defect: each api run of a mutant costs the suite's test budget.)
 */
const several =
  (...makes: ReadonlyArray<() => Middleware>) =>
  (): Middleware => {
    const made = makes.map((make) => make());
    return (inner) => (c, next) => made.reduceRight<() => Promise<void>>((rest, m) => async () => void (await m(inner)(c, rest)), next)();
  };

const exactly = (ids: readonly string[]): RegExp => new RegExp(`^(${ids.map((id) => id.replace(/\./g, '\\.')).join('|')})$`);

const REFUSALS = ['api.rules.refusal.endpoint-inactive', 'api.rules.refusal.not-settleable', 'api.rules.refusal.order-not-open', 'api.rules.refusal.delivery-not-retryable'];
const ENDPOINT_RULES = ['api.rules.endpoints.url-destination', 'api.rules.endpoints.edit-to-taken', 'api.rules.deliveries.endpoint-filter'];

export const ROUND_SIX_API_MUTANTS: readonly ServerMutant[] = [
  {
    name: 'environment-ignored',
    defect: "a management request with a test API key and environment=live answers for the key's own environment instead of 403 tenant-mismatch",
    target: 'api',
    build: mutant(() => environmentIgnored),
    mustFail: ['api.listWebhookEndpoints.tenant.other-environment', 'api.getDelivery.tenant.other-environment', 'api.rotateCallbackSecret.tenant.other-environment'],
    failsOnly: /^api\.[A-Za-z]+\.tenant\.other-environment$/,
  },
  {
    name: 'state-refusals-accepted',
    defect: "a disabled endpoint's secret rotated (200), a settled payout settled again (200), a deposit to a cancelled order (201), a retry of a delivery that is not failed (200): each instead of its 409",
    target: 'api',
    build: mutant(
      several(
        () => rotatesDisabledEndpoint,
        settlesTwice,
        () => acceptsRefusal(/^\/sandbox\/orders\/[^/]+\/deposits$/, 'order-not-open', { POST: 201 }),
        () => acceptsRefusal(/^\/v2\/webhooks\/deliveries\/[^/]+\/retry$/, 'delivery-not-retryable', { POST: 200 }),
      ),
    ),
    mustFail: REFUSALS,
    failsOnly: exactly(REFUSALS),
  },
  {
    name: 'endpoint-rules-unchecked',
    defect: "a webhook URL breaking a destination rule accepted on POST (201) and PATCH (200) while notifyUrl is still checked; a URL edit to another active endpoint's URL answered 200; ?endpointId= ignored by GET /v2/webhooks/deliveries",
    target: 'api',
    build: mutant(
      several(
        () => acceptsRefusal(/^\/v2\/webhooks\/endpoints(\/[^/]+)?$/, 'destination-not-allowed', { POST: 201, PATCH: 200 }),
        () => acceptsRefusal(/^\/v2\/webhooks\/endpoints\/[^/]+$/, 'endpoint-exists', { PATCH: 200 }),
        () => endpointFilterIgnored,
      ),
    ),
    mustFail: ENDPOINT_RULES,
    failsOnly: exactly(ENDPOINT_RULES),
  },
  {
    name: 'sandbox-keys-unchecked',
    defect: 'a live key on the sandbox answered 403 permission-denied instead of live-key-not-allowed; a key without a write permission arms the write fault',
    target: 'api',
    build: mutant(several(() => liveKeyAsPermission, armsForAnyKey)),
    mustFail: ['api.getSandboxWallet.auth.live-key', 'api.settleSandboxPayout.auth.live-key', 'api.injectSandboxWriteFault.auth.live-key', 'api.injectSandboxWriteFault.auth.permission-denied'],
    // (The fault the key without permission armed is taken by the check's own next write.)
    failsOnly: /^api\.([A-Za-z]+\.auth\.live-key|injectSandboxWriteFault\.auth\.permission-denied)$/,
  },
];
