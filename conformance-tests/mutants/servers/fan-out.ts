// The broken routers of issue 68 (several endpoints per environment, each with its event types).
// Each is the real app with one defect, caught by a check of conformance/sender/fan-out.ts.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { SIGNATURE_HEADER, signatureHeader } from '../../../signing/signature.ts';
import { eventIdOf, headerName, withSender } from './sender-seam.ts';
import { wrapApp } from './wrap.ts';
import type { ServerMutant } from './mutant.ts';
import { SHORT_WAIT } from './round-five-sender.ts';

const ENDPOINTS = '/v2/webhooks/endpoints';

/**
 * Every event to every endpoint: eventTypes is answered as given but never stored, so each
 * endpoint receives every type.
 */
function everyEventToEveryEndpoint(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    const editing = (c.req.method === 'POST' && c.req.path === ENDPOINTS) || (c.req.method === 'PATCH' && c.req.path.startsWith(`${ENDPOINTS}/`));
    if (!editing) return next();
    const sent = JSON.parse(await c.req.raw.clone().text()) as { eventTypes?: unknown };
    if (sent.eventTypes === undefined) return next();
    const { eventTypes, ...rest } = sent;
    const res = await inner(new Request(c.req.url, { method: c.req.method, headers: c.req.raw.headers, body: JSON.stringify(rest) })); // the defect
    const answered = res.ok ? JSON.stringify({ ...((await res.json()) as object), eventTypes }) : await res.text();
    c.res = new Response(answered, { status: res.status, headers: res.headers });
  });
}

/** Every delivery of an event signed with the secret of the first endpoint it was sent to. */
function signsWithFirstEndpointSecret(services: Services, config: Config): BuiltApp {
  const firstSecret = new Map<string, string>();
  return withSender(services, config, (real, secretOf) => async (req) => {
    const secret = secretOf(req);
    const id = eventIdOf(req);
    const name = headerName(req, SIGNATURE_HEADER);
    const t = name === undefined ? undefined : /^t=([0-9]+),/.exec(req.headers[name] ?? '')?.[1];
    if (secret === null || id === undefined || name === undefined || t === undefined || !('type' in (JSON.parse(req.body) as object))) return real(req);
    const kept = firstSecret.get(id) ?? secret;
    firstSecret.set(id, kept); // the defect: one secret per event, whichever endpoint it goes to
    return real({ ...req, headers: { ...req.headers, [name]: signatureHeader(kept, Number(t), req.body) } });
  });
}

/** A change of one endpoint (URL edit, rotation, disabling) disables every pending delivery of the environment. */
function disablesEnvironmentOnChange(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    const changing = c.req.path.startsWith(`${ENDPOINTS}/`) && (c.req.method === 'PATCH' || c.req.path.endsWith('/rotate-secret'));
    await next();
    if (!changing || c.res.status !== 200) return;
    const query = new URL(c.req.url).search;
    const listed = await inner(new Request(new URL(`${ENDPOINTS}${query}`, c.req.url), { headers: c.req.raw.headers }));
    const { data } = (await listed.json()) as { data: Array<{ id: string; version: number; active: boolean }> };
    const now = services.clock.now();
    await services.store.transaction(async (tx) => {
      for (const e of data.filter((x) => x.active)) await tx.deliveries.disableOlderVersions(e.id, e.version + 1, now); // the defect
    });
  });
}

export const FAN_OUT_MUTANTS: ServerMutant[] = [
  {
    name: 'every-event-to-every-endpoint',
    defect: 'sends every event to every active endpoint, whatever its eventTypes',
    target: 'sender',
    build: everyEventToEveryEndpoint,
    mustFail: ['sender.fan-out.by-type'],
    // Nor are eventTypes changed: the scenarios that narrow them (pending-change.ts, recover-paced.ts) fail too.
    // And the health scenario's operational events reach the endpoints that did not ask for them.
    failsOnly: /^sender\.(fan-out\.by-type|pending\.[a-z-]+|recover\.(paced|per-endpoint)|health\.(gone-disables|disabled-event|operational-explicit))$/,
  },
  {
    name: 'signs-with-first-endpoint-secret',
    defect: "signs every endpoint's delivery of an event with the secret of the first endpoint it was sent to",
    target: 'sender',
    build: signsWithFirstEndpointSecret,
    mustFail: ['sender.fan-out.own-secret'],
    // A delivery recovered after a rotation is an event sent before: its first secret is the
    // previous one. pending.scheme verifies an endpoint's retries with its own secret.
    failsOnly: /^sender\.(fan-out\.own-secret|recover\.after-change|pending\.scheme)$/,
  },
  {
    name: 'disables-environment-on-change',
    defect: "a change of one endpoint disables the pending deliveries of every endpoint of the environment",
    target: 'sender',
    // Its scenarios wait out --wait-ms (pending-change.ts: --attempts-window-ms) for a marker that never comes: 10 s and 30 s, not 30 s and 120 s.
    args: [...SHORT_WAIT, '--attempts-window-ms', '30000'],
    build: disablesEnvironmentOnChange,
    mustFail: ['sender.fan-out.version-per-endpoint'],
    // pending-change.ts's unchanged endpoint, the marker, is disabled too: its scenario never ends.
    failsOnly: /^sender\.(fan-out\.version-per-endpoint|pending\.[a-z-]+)$/,
  },
];
