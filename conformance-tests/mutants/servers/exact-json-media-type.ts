// Mutant: a request body is refused with 415 unless its Content-Type is the exact string
// `application/json`: `application/json; charset=utf-8` and `Application/JSON`, the same media
// type by HTTP's definition, are refused.
// Caught by the api target's `api.createOrder.body.json-media-type-forms` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

export function build(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    const type = c.req.header('content-type');
    if (type === undefined || type === 'application/json' || !type.toLowerCase().startsWith('application/json')) return next();
    // the defect: a string comparison where HTTP defines a media type
    const status = 415;
    c.res = Response.json(
      { type: 'https://errors.payments.example/unsupported-media-type', title: 'Unsupported media type', status, detail: 'Request bodies must be application/json.' },
      { status, headers: { 'content-type': 'application/problem+json' } },
    );
  });
}
