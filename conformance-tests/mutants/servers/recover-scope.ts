// Broken recoveries and test webhooks of issue 67, round six: recovery unpaced or beyond its
// endpoint (conformance/sender/recover-paced.ts), and a test webhook beyond its endpoint
// (conformance/sender/fan-out.ts). Each is the real app with one defect, through the store
// seam (store-seam.ts) or a middleware around the app (wrap.ts).
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { withStore } from './store-seam.ts';
import { wrapApp, type Inner } from './wrap.ts';
import type { ServerMutant } from './mutant.ts';

const ENDPOINTS = '/v2/webhooks/endpoints';

/** Every recovered delivery is due at once: the recovery is not paced. */
function recoversAllAtOnce(services: Services, config: Config): BuiltApp {
  return withStore(services, config, () => ({
    deliveries: (real) => ({
      restart: ({ dueAt: _paced, ...d }) => real.deliveries.restart(d), // the defect
    }),
  }));
}

/** A recovery matches the endpoint's deliveries of every type, not only of those it receives now. */
function recoversEveryType(services: Services, config: Config): BuiltApp {
  return withStore(services, config, () => ({
    deliveries: (real) => ({
      recoverable: (environmentId, q) => real.deliveries.recoverable(environmentId, { ...q, eventTypes: null }), // the defect
    }),
  }));
}

/** The other active endpoints of the request's environment, as listed with its own credentials. */
async function otherEndpoints(inner: Inner, req: Request, endpointId: string): Promise<string[]> {
  const listed = await inner(new Request(new URL(`${ENDPOINTS}${new URL(req.url).search}`, req.url), { headers: req.headers }));
  const { data } = (await listed.json()) as { data: Array<{ id: string; active: boolean }> };
  return data.filter((e) => e.active && e.id !== endpointId).map((e) => e.id);
}

/** After `POST /v2/webhooks/endpoints/{id}/<action>` succeeds, the same request is made for every other active endpoint. */
function alsoForEveryEndpoint(action: 'recover' | 'test'): (services: Services, config: Config) => BuiltApp {
  const path = new RegExp(`^${ENDPOINTS}/([^/]+)/${action}$`);
  return (services, config) =>
    wrapApp(buildApp(services, config), (inner) => async (c, next) => {
      const id = c.req.method === 'POST' ? path.exec(c.req.path)?.[1] : undefined;
      if (id === undefined) return next();
      const body = action === 'recover' ? await c.req.raw.clone().text() : undefined;
      await next();
      if (c.res.status >= 300) return;
      for (const other of await otherEndpoints(inner, c.req.raw, id)) {
        const url = new URL(c.req.url);
        url.pathname = `${ENDPOINTS}/${other}/${action}`;
        await inner(new Request(url, { method: 'POST', headers: c.req.raw.headers, ...(body === undefined ? {} : { body }) })); // the defect
      }
    });
}

const only = (id: string): RegExp => new RegExp(`^${id.replace(/\./g, '\\.')}$`);

export const RECOVER_SCOPE_MUTANTS: readonly ServerMutant[] = [
  { name: 'recovers-all-at-once', defect: 'a recovery makes every matching delivery due at once, unpaced', target: 'sender', build: recoversAllAtOnce, mustFail: ['sender.recover.paced'], failsOnly: only('sender.recover.paced') },
  { name: 'recovers-every-type', defect: "a recovery sends the endpoint's deliveries of types it no longer receives too", target: 'sender', build: recoversEveryType, mustFail: ['sender.recover.per-endpoint'], failsOnly: only('sender.recover.per-endpoint') },
  { name: 'recovers-every-endpoint', defect: "a recovery of one endpoint recovers the same window of every other active endpoint", target: 'sender', build: alsoForEveryEndpoint('recover'), mustFail: ['sender.recover.per-endpoint'], failsOnly: only('sender.recover.per-endpoint') },
  { name: 'test-to-every-endpoint', defect: 'a test webhook sent from one endpoint goes to every active endpoint', target: 'sender', build: alsoForEveryEndpoint('test'), mustFail: ['sender.fan-out.test-own-endpoint'], failsOnly: only('sender.fan-out.test-own-endpoint') },
];
