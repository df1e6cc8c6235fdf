// Mutant: GET /transactions/users caches its authorization by route: once a key with
// transactions_read has read it, a key without the permission is let through on the
// credentials that were allowed (the "permission denied" row of the seed is lost).
// Caught by the api target's `api.listUserTransactions.auth.permission-denied` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  let allowed: { key: string; hash: string } | null = null;
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    if (c.req.method !== 'GET' || c.req.path !== '/transactions/users') return next();
    await next();
    const key = c.req.header('x-api-key');
    const hash = c.req.header('x-api-hash');
    if (c.res.status === 200 && key !== undefined && hash !== undefined) allowed = { key, hash };
    if (c.res.status === 403 && allowed !== null) {
      const problem = (await c.res.clone().json()) as { type?: string };
      if (!problem.type?.endsWith('/permission-denied')) return;
      const headers = new Headers(c.req.raw.headers);
      headers.set('x-api-key', allowed.key); // the defect
      headers.set('x-api-hash', allowed.hash);
      c.res = await inner(new Request(c.req.raw, { headers }));
    }
  });
}
