// Mutant: GET /transactions treats the required x-tenant-id as optional. When the header is
// missing, it is filled in with the tenant of the API key, so the search answers as if sent.
// Caught by the api target's `api.rules.tenant-header-required` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    const key = c.req.header('x-api-key');
    if (c.req.method === 'GET' && c.req.path === '/transactions' && c.req.header('x-tenant-id') === undefined && key !== undefined) {
      const record = await services.store.transaction((tx) => tx.tenants.getApiKey(key));
      if (record) {
        const headers = new Headers(c.req.raw.headers);
        headers.set('x-tenant-id', record.tenantId); // the defect
        c.res = await inner(new Request(c.req.raw, { headers }));
        return;
      }
    }
    await next();
  });
}
