// Round seven of the broken API servers (issue 67): the listing rules that had no id. Each
// server is the real app behind one Hono middleware (wrap.ts) with two defects on paths of their
// own, each caught by its own check (api/list-rules.ts) with its own message, and no other.
import type { Context } from 'hono';
import { buildApp } from '../../../server/app/build-app.ts';
import type { AppEnv } from '../../../server/http/app-env.ts';
import { wrapApp, type Inner } from './wrap.ts';
import type { ServerMutant } from './mutant.ts';

type Json = Record<string, unknown>;
type Step = (inner: Inner, c: Context<AppEnv>, next: () => Promise<void>) => Promise<void>;

/** The steps in order around the real app: the first is outermost. */
const steps =
  (...all: Step[]) =>
  (inner: Inner) =>
  (c: Context<AppEnv>, next: () => Promise<void>): Promise<void> =>
    all.reduceRight<() => Promise<void>>((rest, step) => () => step(inner, c, rest), next)();

/** The same GET to the real app at another URL. */
const resend = (c: Context<AppEnv>, inner: Inner, url: URL): Promise<Response> => inner(new Request(url.href, { method: 'GET', headers: new Headers(c.req.raw.headers) }));

/** Replaces the answer's JSON body, keeping its status and headers. */
const answerWith = (c: Context<AppEnv>, body: unknown): void => {
  const headers = new Headers(c.res.headers);
  headers.delete('content-length');
  const status = c.res.status;
  c.res = undefined as unknown as Response; // Hono copies the old answer's headers onto a new one: clear it first
  c.res = new Response(JSON.stringify(body), { status, headers });
};

const problemOf = async (res: Response): Promise<string | null> => {
  if (!(res.headers.get('content-type') ?? '').includes('problem+json')) return null;
  const type = ((await res.clone().json()) as { type?: unknown }).type;
  return typeof type === 'string' ? type.slice(type.lastIndexOf('/') + 1) : null;
};

/** The parameter's own pattern: a cursor the schema admits (a malformed one is still refused). */
const CURSOR_SHAPE = /^[A-Za-z0-9_-]{1,200}$/;

/** GET /v2/events: a well-formed cursor it did not issue is taken as "from the start". */
const unknownCursorFromStart: Step = async (inner, c, next) => {
  const url = new URL(c.req.url);
  const cursor = url.searchParams.get('cursor');
  if (c.req.method !== 'GET' || url.pathname !== '/v2/events' || cursor === null || !CURSOR_SHAPE.test(cursor)) return next();
  await next();
  if (c.res.status !== 400 || (await problemOf(c.res)) !== 'validation-failed') return;
  url.searchParams.delete('cursor'); // the defect
  c.res = await resend(c, inner, url);
};

/** GET /v2/events: a valid `type` is dropped, every type listed. */
const typeFilterIgnored: Step = async (inner, c, next) => {
  const url = new URL(c.req.url);
  if (c.req.method !== 'GET' || url.pathname !== '/v2/events' || !url.searchParams.has('type')) return next();
  await next();
  if (c.res.status !== 200) return; // a valid type only
  url.searchParams.delete('type'); // the defect
  c.res = await resend(c, inner, url);
};

/** GET /v2/orders/{orderId}/payments: newest first. */
const paymentsNewestFirst: Step = async (_inner, c, next) => {
  await next();
  if (c.req.method !== 'GET' || !/^\/v2\/orders\/[^/]+\/payments$/.test(c.req.path) || c.res.status !== 200) return;
  const list = (await c.res.clone().json()) as Json;
  if (!Array.isArray(list.data)) return;
  answerWith(c, { ...list, data: [...list.data].reverse() }); // the defect
};

/** GET /transactions?orderNumber= (without txHash): the oldest match, not the most recent. */
const searchAnswersOldest: Step = async (inner, c, next) => {
  const url = new URL(c.req.url);
  await next();
  if (c.req.method !== 'GET' || url.pathname !== '/transactions' || !url.searchParams.has('orderNumber') || url.searchParams.has('txHash') || c.res.status !== 200) return;
  const found = (await c.res.clone().json()) as Json;
  if (typeof found.orderId !== 'string') return;
  const payments = await resend(c, inner, new URL(`/v2/orders/${found.orderId}/payments`, url));
  const first = payments.status === 200 ? ((await payments.json()) as { data?: Json[] }).data?.[0] : undefined;
  if (typeof first?.txHash !== 'string' || first.txHash === found.txHash) return;
  url.searchParams.set('txHash', first.txHash); // the defect: the oldest payment of the order
  c.res = await resend(c, inner, url);
};

const EVENT_FEED = ['api.rules.events.type-filter', 'api.rules.events.foreign-cursor'];
const ORDER_PAYMENTS = ['api.rules.order-payments.oldest-first', 'api.rules.search.most-recent'];
const exactly = (ids: readonly string[]): RegExp => new RegExp(`^(${ids.map((id) => id.replace(/\./g, '\\.')).join('|')})$`);

export const ROUND_SEVEN_API_MUTANTS: readonly ServerMutant[] = [
  {
    name: 'event-feed-unchecked',
    defect: 'GET /v2/events takes a well-formed cursor it did not issue as "from the start" (200) and ignores a valid type filter',
    target: 'api',
    build: (services, config) => wrapApp(buildApp(services, config), steps(unknownCursorFromStart, typeFilterIgnored)),
    mustFail: EVENT_FEED,
    failsOnly: exactly(EVENT_FEED),
  },
  {
    name: 'order-payments-reversed',
    defect: "GET /v2/orders/{orderId}/payments lists newest first; GET /transactions?orderNumber= answers the order's oldest payment, not the most recent",
    target: 'api',
    build: (services, config) => wrapApp(buildApp(services, config), steps(paymentsNewestFirst, searchAnswersOldest)),
    mustFail: ORDER_PAYMENTS,
    failsOnly: exactly(ORDER_PAYMENTS),
  },
];
