// Mutant 3: accepts a request with x-api-key and no x-api-hash. An authentication shortcut
// remembers each key once it authenticated, keyed by the public key alone, and lets later
// requests without the secret ride on it.
// Caught by the api target's `api.<operation>.auth.missing-hash` checks.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  const authenticated = new Map<string, string>();
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    const key = c.req.header('x-api-key');
    const hash = c.req.header('x-api-hash');
    const remembered = key === undefined ? undefined : authenticated.get(key);
    if (key !== undefined && hash === undefined && remembered !== undefined) {
      const headers = new Headers(c.req.raw.headers);
      headers.set('x-api-hash', remembered); // the defect
      c.res = await inner(new Request(c.req.raw, { headers }));
      return;
    }
    await next();
    if (key !== undefined && hash !== undefined && c.res.status !== 401) authenticated.set(key, hash);
  });
}
