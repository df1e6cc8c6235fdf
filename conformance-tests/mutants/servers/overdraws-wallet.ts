// Mutant: a payout the wallet cannot cover is not refused: the wallet is topped up with the
// missing amount and the payout created (no 422 insufficient-funds).
// Caught by the api target's `api.rules.insufficient-funds` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    if (c.req.method !== 'POST' || c.req.path !== '/transactions/payout') return next();
    const body = await c.req.raw.clone().text();
    await next();
    if (c.res.status !== 422) return;
    const amount = (JSON.parse(body) as { amount?: unknown }).amount;
    const headers = new Headers(c.req.raw.headers);
    const fund = new Request(new URL('/sandbox/wallet/fund', c.req.url), { method: 'POST', headers, body: JSON.stringify({ amount }) });
    await inner(fund); // the defect
    c.res = await inner(new Request(c.req.url, { method: 'POST', headers, body }));
  });
}
