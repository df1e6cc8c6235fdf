// Mutant (issue 67): POST /v2/orders answers the new order without the networkId it was sent
// (the contract: assetId, networkId and amountBaseUnits are answered back as given). The order
// is stored as sent; only the creation's answer drops it. Caught by `api.rules.order-created-open`.
import { buildApp } from '../../../server/app/build-app.ts';
import type { ServerMutant } from './mutant.ts';
import { wrapApp } from './wrap.ts';

export const ORDER_DROPS_NETWORK_MUTANT: ServerMutant = {
  name: 'order-drops-network',
  defect: 'POST /v2/orders answers the new order without the networkId it was sent',
  target: 'api',
  build: (services, config) =>
    wrapApp(buildApp(services, config), () => async (c, next) => {
      await next();
      if (c.req.method !== 'POST' || c.req.path !== '/v2/orders' || c.res.status !== 201) return;
      const { networkId, ...order } = (await c.res.clone().json()) as Record<string, unknown>;
      if (networkId === undefined) return;
      const headers = new Headers(c.res.headers);
      headers.delete('content-length');
      c.res = undefined as unknown as Response; // Hono copies the old answer's headers onto a new one: clear it first
      c.res = new Response(JSON.stringify(order), { status: 201, headers }); // the defect
    }),
  mustFail: ['api.rules.order-created-open'],
  failsOnly: /^api\.rules\.order-created-open$/,
};
