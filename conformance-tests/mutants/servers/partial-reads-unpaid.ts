// Mutant (issue 67): GET /v2/orders/{orderId} answers a partially paid order as `unpaid` (the
// contract: a verified deposit below the expected amount makes it `partially_paid`). Caught
// only by `api.rules.payment-status.transitions`.
import { buildApp } from '../../../server/app/build-app.ts';
import type { ServerMutant } from './mutant.ts';
import { wrapApp } from './wrap.ts';

export const PARTIAL_READS_UNPAID_MUTANT: ServerMutant = {
  name: 'partial-reads-unpaid',
  defect: 'GET /v2/orders/{orderId} answers a partially paid order as unpaid',
  target: 'api',
  build: (services, config) =>
    wrapApp(buildApp(services, config), () => async (c, next) => {
      await next();
      if (c.req.method !== 'GET' || !/^\/v2\/orders\/[^/]+$/.test(c.req.path) || c.res.status !== 200) return;
      const order = (await c.res.clone().json()) as Record<string, unknown>;
      if (order.paymentStatus !== 'partially_paid') return;
      const headers = new Headers(c.res.headers);
      headers.delete('content-length');
      c.res = undefined as unknown as Response; // Hono copies the old answer's headers onto a new one: clear it first
      c.res = new Response(JSON.stringify({ ...order, paymentStatus: 'unpaid' }), { status: 200, headers }); // the defect
    }),
  mustFail: ['api.rules.payment-status.transitions'],
  failsOnly: /^api\.rules\.payment-status\.transitions$/,
};
