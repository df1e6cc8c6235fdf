// Mutant: request bodies are parsed as JSON whatever their Content-Type (text/plain is not
// refused with 415 unsupported-media-type).
// Caught by the api target's `api.<operation>.body.not-json` checks.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    const type = c.req.header('content-type');
    if (type === undefined || type.startsWith('application/json')) return next();
    const headers = new Headers(c.req.raw.headers);
    headers.set('content-type', 'application/json'); // the defect
    c.res = await inner(new Request(c.req.raw, { headers }));
  });
}
