// Mutant (issue 67): GET /v2/webhooks/deliveries?q= also matches a prefix or a part of an event
// id, order id or merchant reference when nothing matches exactly (the contract: exact match
// only; no match is an empty page). Caught only by `api.rules.search.deliveries-exact`.
import { buildApp } from '../../../server/app/build-app.ts';
import type { ServerMutant } from './mutant.ts';
import { wrapApp } from './wrap.ts';

type Item = Record<string, unknown>;
const matches = (item: Item, q: string): boolean => ['eventId', 'orderId', 'merchantReference'].some((k) => typeof item[k] === 'string' && (item[k] as string).includes(q));

export const SEARCH_BY_PREFIX_MUTANT: ServerMutant = {
  name: 'search-by-prefix',
  defect: 'GET /v2/webhooks/deliveries?q= matches part of an id when nothing matches exactly',
  target: 'api',
  build: (services, config) =>
    wrapApp(buildApp(services, config), (inner) => async (c, next) => {
      await next();
      const q = c.req.query('q');
      if (c.req.method !== 'GET' || c.req.path !== '/v2/webhooks/deliveries' || !q || c.res.status !== 200) return;
      const page = (await c.res.clone().json()) as { data: Item[]; nextCursor: unknown };
      if (page.data.length > 0) return;
      const url = new URL(c.req.url);
      url.searchParams.delete('q');
      url.searchParams.set('limit', '100');
      const all = (await (await inner(new Request(url, { headers: c.req.raw.headers }))).json()) as { data: Item[] };
      const body = JSON.stringify({ data: all.data.filter((d) => matches(d, q)), nextCursor: null }); // the defect
      c.res = undefined as unknown as Response; // Hono copies the old answer's headers onto a new one: clear it first
      c.res = new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
    }),
  mustFail: ['api.rules.search.deliveries-exact'],
  failsOnly: /^api\.rules\.search\.deliveries-exact$/,
};
