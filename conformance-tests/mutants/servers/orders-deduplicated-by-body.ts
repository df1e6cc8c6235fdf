// Mutant: POST /v2/orders without an Idempotency-Key answers the order already created from an
// identical body (a "helpful" deduplication), where the contract creates an order for every
// request without the header.
// Caught by the api target's `api.rules.order-without-key-creates` check.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

interface Answer {
  status: number;
  headers: Headers;
  body: ArrayBuffer;
}

export function build(services: Services, config: Config): BuiltApp {
  const byBody = new Map<string, Answer>();
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    if (c.req.method !== 'POST' || c.req.path !== '/v2/orders' || c.req.header('idempotency-key') !== undefined) return next();
    const key = `${c.req.header('x-api-key') ?? ''}\n${await c.req.raw.clone().text()}`;
    const earlier = byBody.get(key); // the defect: the body stands in for a key nobody sent
    if (earlier) {
      c.res = new Response(earlier.body.slice(0), { status: earlier.status, headers: earlier.headers });
      return;
    }
    await next();
    if (c.res.status === 201) byBody.set(key, { status: 201, headers: new Headers(c.res.headers), body: await c.res.clone().arrayBuffer() });
  });
}
