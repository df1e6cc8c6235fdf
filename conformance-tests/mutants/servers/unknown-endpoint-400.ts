// Mutant (issue 67): an unknown webhook endpoint id is answered 400 validation-failed, not the
// documented 404 not-found. Caught only by the generated `api.<operationId>.unknown-id.not-found`
// checks of the endpoint's operations (api/isolation.ts unknownIdChecks).
import { buildApp } from '../../../server/app/build-app.ts';
import type { ServerMutant } from './mutant.ts';
import { wrapApp } from './wrap.ts';

export const UNKNOWN_ID_MUTANT: ServerMutant = {
  name: 'unknown-endpoint-400',
  defect: 'an unknown webhook endpoint id is answered 400 validation-failed instead of 404 not-found',
  target: 'api',
  build: (services, config) =>
    wrapApp(buildApp(services, config), () => async (c, next) => {
      await next();
      if (!c.req.path.startsWith('/v2/webhooks/endpoints/') || c.res.status !== 404) return;
      const body = { type: 'https://errors.payments.example/validation-failed', title: 'Request validation failed', status: 400, detail: 'The request is invalid: /path/endpointId names no endpoint.', errors: [{ pointer: '/path/endpointId', detail: 'names no endpoint' }] };
      c.res = undefined as unknown as Response; // Hono copies the old answer's headers onto a new one: clear it first
      c.res = new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/problem+json' } }); // the defect
    }),
  mustFail: ['api.getWebhookEndpoint.unknown-id.not-found', 'api.updateWebhookEndpoint.unknown-id.not-found'],
  failsOnly: /^api\.(getWebhookEndpoint|updateWebhookEndpoint|rotateWebhookSecret|sendTestWebhook|recoverDeliveries)\.unknown-id\.not-found$/,
};
