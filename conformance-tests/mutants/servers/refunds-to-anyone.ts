// Mutant: a refund to an e-mail that no service account has is answered as if it was made
// (200 refunded) instead of 422 unknown-refund-account.
// Caught by the api target's `api.rules.refund-unknown-account` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    if (c.req.method !== 'POST' || c.req.path !== '/transactions/refund') return next();
    await next();
    if (c.res.status !== 422) return;
    const problem = (await c.res.clone().json()) as { type?: string };
    if (!problem.type?.endsWith('/unknown-refund-account')) return;
    c.res = new Response(JSON.stringify({ status: 'refunded', message: 'Refund accepted.' }), { status: 200, headers: { 'content-type': 'application/json' } }); // the defect
  });
}
