// Mutant 1: answers 200 where the contract documents 201 (every creation).
// Caught by the api target's `api.<operation>.succeeds` checks of the creating operations.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    await next();
    if (c.res.status === 201) c.res = new Response(c.res.body, { status: 200, headers: c.res.headers });
  });
}
