// Round four of the broken API servers (issue 41): each is the real app behind one middleware
// that breaks a rule the suite used to send without judging, or never sent.
import type { Context } from 'hono';
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';
import type { Inner } from './wrap.ts';
import type { ServerMutant } from './mutant.ts';

const USERS = '/transactions/users';
const PAYOUT = '/transactions/payout';
/** The cursor the full-page mutant invents; its page is empty. */
const INVENTED_CURSOR = 'mutantFullPageCursor';

/** The body of `c` re-sent to the real app with `body` instead. */
const resend = (inner: Inner, c: Context, body: string, headers: Headers = c.req.raw.headers): Promise<Response> =>
  inner(new Request(c.req.url, { method: c.req.method, headers, body }));

/** GET /transactions/users: a full page always carries a Next-Cursor (hasMore = rows.length === limit). */
function fullPageCursor(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    if (c.req.method !== 'GET' || c.req.path !== USERS) return next();
    if (c.req.query('cursor') === INVENTED_CURSOR) {
      c.res = new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
      return;
    }
    await next();
    const limit = Number(c.req.query('limit') ?? '100');
    if (c.res.status !== 200 || c.res.headers.get('next-cursor') !== null) return;
    const rows = (await c.res.clone().json()) as unknown[];
    if (rows.length === limit) c.res.headers.set('next-cursor', INVENTED_CURSOR); // the defect
  });
}

/** GET /transactions/users answers each page oldest first. */
function oldestFirst(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    if (c.req.method !== 'GET' || c.req.path !== USERS) return next();
    await next();
    if (c.res.status !== 200) return;
    const rows = (await c.res.clone().json()) as unknown[];
    c.res = new Response(JSON.stringify(rows.reverse()), { status: 200, headers: c.res.headers }); // the defect
  });
}

/** Amounts are answered rounded to 6 decimal places (stored exactly, presented through a rounding formatter). */
function roundsAmounts(services: Services, config: Config): BuiltApp {
  const round = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(round) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'amount' && typeof x === 'number' ? Math.round(x * 1e6) / 1e6 : round(x)])) : v;
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    await next();
    if (!(c.req.path === USERS || c.req.path === PAYOUT) || c.res.status >= 300) return;
    const json: unknown = await c.res.clone().json();
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    c.res = new Response(JSON.stringify(round(json)), { status: c.res.status, headers }); // the defect
  });
}

/** A payout amount beyond 15 significant digits is rounded to 15 instead of refused. */
function roundsSignificantDigits(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    if (c.req.method !== 'POST' || c.req.path !== PAYOUT) return next();
    const text = await c.req.raw.clone().text();
    const amount = /("amount"\s*:\s*)([0-9.]+)/;
    const literal = amount.exec(text)?.[2];
    if (literal === undefined || literal.replace('.', '').replace(/^0+/, '').length <= 15) return next();
    c.res = await resend(inner, c, text.replace(amount, (_, key: string) => `${key}${Number(Number(literal).toPrecision(15))}`)); // the defect
  });
}

/** Idempotency keys are kept in one table for every tenant: another tenant's key replays its order. */
function idempotencyKeyGlobal(services: Services, config: Config): BuiltApp {
  const byKey = new Map<string, { apiKey: string; body: string; headers: Headers }>();
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    const idem = c.req.header('idempotency-key');
    if (c.req.method !== 'POST' || c.req.path !== '/v2/orders' || idem === undefined) return next();
    const earlier = byKey.get(idem);
    if (earlier && earlier.apiKey !== c.req.header('x-api-key')) {
      const headers = new Headers(earlier.headers);
      headers.set('idempotent-replayed', 'true');
      c.res = new Response(earlier.body, { status: 201, headers }); // the defect
      return;
    }
    await next();
    if (c.res.status === 201 && !earlier) byKey.set(idem, { apiKey: c.req.header('x-api-key') ?? '', body: await c.res.clone().text(), headers: new Headers(c.res.headers) });
  });
}

const AUTH_HEADERS = ['x-api-key', 'x-api-hash', 'authorization', 'x-tenant-id'];
const ID_KEYS = new Set(['id', 'transactionId']);

/** A write looks its resource up by id alone: aimed at another tenant's resource, it acts on it. */
function writesUnscoped(services: Services, config: Config): BuiltApp {
  const owners = new Map<string, Headers>();
  const remember = (json: unknown, headers: Headers): void => {
    if (json === null || typeof json !== 'object') return;
    for (const [k, v] of Object.entries(json)) {
      if (ID_KEYS.has(k) && typeof v === 'string' && !owners.has(v)) owners.set(v, headers);
      else remember(v, headers);
    }
  };
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    const write = c.req.method === 'POST' || c.req.method === 'PATCH';
    const text = write ? await c.req.raw.clone().text() : '';
    await next();
    if (c.res.status >= 200 && c.res.status < 300 && (c.res.headers.get('content-type') ?? '').includes('json')) {
      remember(await c.res.clone().json(), c.req.raw.headers);
    }
    if (!write || c.res.status !== 404) return;
    const id = [...owners.keys()].find((k) => c.req.path.includes(k) || text.includes(`"${k}"`));
    const owner = id === undefined ? undefined : owners.get(id);
    if (!owner) return;
    const headers = new Headers(c.req.raw.headers);
    for (const h of AUTH_HEADERS) {
      headers.delete(h);
      const v = owner.get(h);
      if (v !== null) headers.set(h, v);
    }
    c.res = await resend(inner, c, text, headers); // the defect: retried as the owner
  });
}

const only = (ids: string[]): RegExp => new RegExp(`^(${ids.map((i) => i.replace(/\./g, '\\.')).join('|')})$`);
const PAGING = 'api.rules.paging.newest-first-full-last-page';
/** Issue 67's paging check also holds the third of three pages to be the last. */
const PAGING_INSERTS = 'api.rules.paging.inserts-between-pages';
const ISOLATION_WRITES = ['revoke', 'refund', 'endpoint-edit', 'delivery-retry'].map((w) => `api.rules.isolation.${w}`);
/** Or the generated isolation check of any write by path id (issue 67), each of which it unscopes too. */
const OR_GENERATED_ISOLATION = (ids: string[]): RegExp => new RegExp(`${only(ids).source}|^api\\.[A-Za-z]+\\.isolation\\.other-tenant$`);

export const ROUND_FOUR_SERVER_MUTANTS: readonly ServerMutant[] = [
  { name: 'full-page-cursor', defect: 'a full last page of GET /transactions/users carries a Next-Cursor (to an empty page)', target: 'api', build: fullPageCursor, mustFail: [PAGING], failsOnly: only([PAGING, PAGING_INSERTS]) },
  { name: 'oldest-first', defect: 'GET /transactions/users answers each page oldest first', target: 'api', build: oldestFirst, mustFail: [PAGING], failsOnly: only([PAGING]) },
  { name: 'rounds-amounts', defect: 'answers amounts rounded to 6 decimal places (the payout and its transaction record)', target: 'api', build: roundsAmounts, mustFail: ['api.rules.amount.exact'], failsOnly: only(['api.rules.amount.exact']) },
  {
    name: 'rounds-significant-digits',
    defect: 'rounds a payout amount of more than 15 significant digits to 15 instead of refusing it',
    target: 'api',
    build: roundsSignificantDigits,
    mustFail: ['api.rules.amount.significant-digits'],
    failsOnly: only(['api.rules.amount.significant-digits']),
  },
  {
    name: 'idempotency-key-global',
    defect: "keeps Idempotency-Keys across tenants: another tenant's same key replays this tenant's order",
    target: 'api',
    build: idempotencyKeyGlobal,
    mustFail: ['api.rules.order-idempotency-per-tenant'],
    failsOnly: only(['api.rules.order-idempotency-per-tenant']),
  },
  { name: 'writes-unscoped', defect: "a revoke, refund, endpoint edit or delivery retry finds its resource by id alone, whatever the tenant", target: 'api', build: writesUnscoped, mustFail: ISOLATION_WRITES, failsOnly: OR_GENERATED_ISOLATION(ISOLATION_WRITES) },
];
