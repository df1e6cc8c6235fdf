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
    name: 'rotates-disabled-endpoint',
    defect: "rotating a disabled endpoint's secret answers 200 with a new secret instead of 409 endpoint-inactive",
    target: 'api',
    build: mutant(() => rotatesDisabledEndpoint),
    mustFail: ['api.rules.refusal.endpoint-inactive'],
    failsOnly: /^api\.rules\.refusal\.endpoint-inactive$/,
  },
  {
    name: 'settles-twice',
    defect: 'settling a settled payout answers 200 again instead of 409 not-settleable',
    target: 'api',
    build: mutant(settlesTwice),
    mustFail: ['api.rules.refusal.not-settleable'],
    failsOnly: /^api\.rules\.refusal\.not-settleable$/,
  },

  {
    name: 'deposits-to-cancelled-order',
    defect: 'a sandbox deposit to a cancelled order answers 201 instead of 409 order-not-open',
    target: 'api',
    build: mutant(() => acceptsRefusal(/^\/sandbox\/orders\/[^/]+\/deposits$/, 'order-not-open', { POST: 201 })),
    mustFail: ['api.rules.refusal.order-not-open'],
    failsOnly: /^api\.rules\.refusal\.order-not-open$/,
  },
  {
    name: 'retries-delivered',
    defect: 'a retry of a delivery that is not failed answers 200 instead of 409 delivery-not-retryable',
    target: 'api',
    build: mutant(() => acceptsRefusal(/^\/v2\/webhooks\/deliveries\/[^/]+\/retry$/, 'delivery-not-retryable', { POST: 200 })),
    mustFail: ['api.rules.refusal.delivery-not-retryable'],
    failsOnly: /^api\.rules\.refusal\.delivery-not-retryable$/,
  },

  {
    name: 'webhook-url-unchecked',
    defect: 'a webhook endpoint URL that breaks a destination rule is answered 201 (POST) and 200 (PATCH) instead of 400 destination-not-allowed; notifyUrl is still checked',
    target: 'api',
    build: mutant(() => acceptsRefusal(/^\/v2\/webhooks\/endpoints(\/[^/]+)?$/, 'destination-not-allowed', { POST: 201, PATCH: 200 })),
    mustFail: ['api.rules.endpoints.url-destination'],
    failsOnly: /^api\.rules\.endpoints\.url-destination$/,
  },
  {
    name: 'edit-to-taken-url',
    defect: 'a URL edit to the URL of another active endpoint answers 200 instead of 409 endpoint-exists',
    target: 'api',
    build: mutant(() => acceptsRefusal(/^\/v2\/webhooks\/endpoints\/[^/]+$/, 'endpoint-exists', { PATCH: 200 })),
    mustFail: ['api.rules.endpoints.edit-to-taken'],
    failsOnly: /^api\.rules\.endpoints\.edit-to-taken$/,
  },
  {
    name: 'endpoint-filter-ignored',
    defect: 'GET /v2/webhooks/deliveries ignores endpointId and lists every endpoint\'s deliveries',
    target: 'api',
    build: mutant(() => endpointFilterIgnored),
    mustFail: ['api.rules.deliveries.endpoint-filter'],
    failsOnly: /^api\.rules\.deliveries\.endpoint-filter$/,
  },

  {
    name: 'live-key-as-permission',
    defect: 'a live key on the sandbox is answered 403 permission-denied instead of 403 live-key-not-allowed',
    target: 'api',
    build: mutant(() => liveKeyAsPermission),
    mustFail: ['api.getSandboxWallet.auth.live-key', 'api.settleSandboxPayout.auth.live-key', 'api.injectSandboxWriteFault.auth.live-key'],
    failsOnly: /^api\.[A-Za-z]+\.auth\.live-key$/,
  },
  {
    name: 'arms-for-any-key',
    defect: 'a key without a write permission arms the sandbox write fault (the arming is made with the last allowed credentials)',
    target: 'api',
    build: mutant(armsForAnyKey),
    mustFail: ['api.injectSandboxWriteFault.auth.permission-denied'],
    failsOnly: /^api\.injectSandboxWriteFault\.auth\.permission-denied$/,
  },
];
