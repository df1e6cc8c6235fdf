// Mutant: a payout's notifyUrl is not held to the destination rules: when it breaks one, the
// payout is created anyway and the URL silently dropped (no 400 destination-not-allowed).
// Caught by the api target's `api.rules.notify-url-destination` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    if (c.req.method !== 'POST' || c.req.path !== '/transactions/payout') return next();
    const text = await c.req.raw.clone().text();
    await next();
    if (c.res.status !== 400) return;
    const problem = (await c.res.clone().json()) as { type?: string };
    if (!problem.type?.endsWith('/destination-not-allowed')) return;
    const body = JSON.parse(text) as Record<string, unknown>;
    delete body.notifyUrl; // the defect
    c.res = await inner(new Request(c.req.url, { method: 'POST', headers: c.req.raw.headers, body: JSON.stringify(body) }));
  });
}
