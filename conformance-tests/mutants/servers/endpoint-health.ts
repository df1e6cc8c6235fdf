// The broken endpoint health of issue 69. Each is the real app with one defect at the sender
// seam, caught by a check of conformance/sender/health.ts.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import type { Store, Tx } from '../../../server/domain/store.ts';
import { ROUTABLE_EVENT_TYPES } from '../../../generated/vocabulary.ts';
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

/**
 * Operational events go to endpoints of every type too: inside the store's transactions an
 * endpoint with eventTypes null is read as naming every routable type, operational ones included.
 * Order events route as before (every order type is in the list); what is stored is unchanged.
 */
function tellsEveryTypeEndpoints(services: Services, config: Config): BuiltApp {
  const real = services.store;
  const widened = (tx: Tx): Tx => {
    const endpoints = new Proxy(tx.endpoints, {
      get: (target, key) => {
        if (key === 'listActive') {
          return async (environmentId: string) => (await target.listActive(environmentId)).map((e) => (e.eventTypes === null ? { ...e, eventTypes: [...ROUTABLE_EVENT_TYPES] } : e)); // the defect
        }
        return bound(target, key);
      },
    });
    return new Proxy(tx, { get: (target, key) => (key === 'endpoints' ? endpoints : bound(target, key)) });
  };
  const store = new Proxy(real, {
    get: (target, key) => (key === 'transaction' ? ((fn, opts) => target.transaction((tx) => fn(widened(tx)), opts)) as Store['transaction'] : bound(target, key)),
  });
  return buildApp({ ...services, store }, config);
}

function bound(target: object, key: string | symbol): unknown {
  const v: unknown = Reflect.get(target, key);
  return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
}

export const ENDPOINT_HEALTH_MUTANTS: ServerMutant[] = [
  {
    name: 'keeps-sending-after-gone',
    defect: 'takes a 410 Gone for one more failure: the endpoint keeps being sent to and is never disabled',
    target: 'sender',
    build: keepsSendingAfterGone,
    mustFail: ['sender.health.gone-disables'],
    // No disable, so no webhook_endpoint.disabled either.
    failsOnly: /^sender\.health\.(gone-disables|disabled-event|operational-explicit)$/,
  },
  {
    name: 'tells-the-gone-endpoint',
    defect: 'sends webhook_endpoint.disabled to the endpoint it is about as well as to the alerting one',
    target: 'sender',
    build: tellsTheGoneEndpoint,
    mustFail: ['sender.health.disabled-event'],
    failsOnly: /^sender\.health\.disabled-event$/,
  },
  {
    name: 'tells-every-type-endpoints',
    defect: 'sends operational events (webhook_endpoint.*) to endpoints of every type (eventTypes null) as well as to those that name them',
    target: 'sender',
    build: tellsEveryTypeEndpoints,
    mustFail: ['sender.health.operational-explicit'],
    failsOnly: /^sender\.health\.operational-explicit$/,
  },
];
