// Mutant (issue 67): GET /v2/webhooks/deliveries/{deliveryId} remembers every delivery it has
// answered by its id alone, and answers it again where the store says 404: to another tenant
// asking for that id too. A leak on one route that no hand-written isolation check reads.
// Caught by the api target's generated `api.getDelivery.isolation.other-tenant` only.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { wrapApp } from './wrap.ts';

const DELIVERY = /^\/v2\/webhooks\/deliveries\/([^/]+)$/;

export function build(services: Services, config: Config): BuiltApp {
  const seen = new Map<string, string>();
  return wrapApp(buildApp(services, config), () => async (c, next) => {
    const id = c.req.method === 'GET' ? DELIVERY.exec(c.req.path)?.[1] : undefined;
    await next();
    if (id === undefined) return;
    if (c.res.status === 200) seen.set(id, await c.res.clone().text());
    const known = seen.get(id);
    if (c.res.status === 404 && known !== undefined) c.res = new Response(known, { status: 200, headers: { 'content-type': 'application/json' } }); // the defect
  });
}
