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
];
