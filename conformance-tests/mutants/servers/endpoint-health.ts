// The broken endpoint health of issue 69. Each is the real app with one defect at the sender
// seam, caught by a check of conformance/sender/health.ts.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import type { BuiltApp } from '../../../server/app/build-app.ts';
import { withSender } from './sender-seam.ts';
import type { ServerMutant } from './mutant.ts';

/** A 410 is taken for one more failure: the endpoint is tried again on the schedule and never disabled. */
function keepsSendingAfterGone(services: Services, config: Config): BuiltApp {
  return withSender(services, config, (real) => async (req) => {
    const sent = await real(req);
    return sent.statusCode === 410 ? { ...sent, statusCode: 500 } : sent; // the defect
  });
}

/** webhook_endpoint.disabled goes to the endpoint it is about too (its URL, from the event's data). */
function tellsTheGoneEndpoint(services: Services, config: Config): BuiltApp {
  return withSender(services, config, (real) => async (req) => {
    const parsed = JSON.parse(req.body) as { type?: unknown; data?: { url?: unknown } };
    if (parsed.type === 'webhook_endpoint.disabled' && typeof parsed.data?.url === 'string') await real({ ...req, url: parsed.data.url }); // the defect
    return real(req);
  });
}

export const ENDPOINT_HEALTH_MUTANTS: ServerMutant[] = [
  {
    name: 'keeps-sending-after-gone',
    defect: 'takes a 410 Gone for one more failure: the endpoint keeps being sent to and is never disabled',
    target: 'sender',
    build: keepsSendingAfterGone,
    mustFail: ['sender.health.gone-disables'],
    // No disable, so no webhook_endpoint.disabled either.
    failsOnly: /^sender\.health\.(gone-disables|disabled-event)$/,
  },
  {
    name: 'tells-the-gone-endpoint',
    defect: 'sends webhook_endpoint.disabled to the endpoint it is about as well as to the alerting one',
    target: 'sender',
    build: tellsTheGoneEndpoint,
    mustFail: ['sender.health.disabled-event'],
    failsOnly: /^sender\.health\.disabled-event$/,
  },
];
