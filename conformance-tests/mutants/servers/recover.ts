// Broken recoveries by time range (issue 42), each the real app with one defect, caught by the
// sender target's recover.window check and no other.
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import { eventIdOf, withSender } from './sender-seam.ts';
import { wrapApp } from './wrap.ts';
import type { ServerMutant } from './mutant.ts';

/** An event sent again after it was delivered (a recovered delivery) goes out twice. */
function sendsTwice(services: Services, config: Config): BuiltApp {
  const delivered = new Set<string>();
  return withSender(services, config, (real) => async (req) => {
    const id = eventIdOf(req) ?? '';
    const outcome = await real(req);
    if (delivered.has(id)) return real(req); // the defect
    if (outcome.success) delivered.add(id);
    return outcome;
  });
}

const RECOVER_PATH = /^\/v2\/webhooks\/endpoints\/[^/]+\/recover$/;

/** The recover request's window is ignored: every delivery of the endpoint since the epoch goes again. */
function ignoresWindow(services: Services, config: Config): BuiltApp {
  return wrapApp(buildApp(services, config), (inner) => async (c, next) => {
    if (c.req.method !== 'POST' || !RECOVER_PATH.test(c.req.path)) return next();
    const body = (await c.req.raw.clone().json().catch(() => null)) as Record<string, unknown> | null;
    if (body === null || typeof body !== 'object') return next();
    const { until: _until, ...rest } = body;
    const everything = JSON.stringify({ ...rest, since: new Date(0).toISOString() }); // the defect
    // The server reads a body by its content-length: the rewritten one's.
    const headers = new Headers(c.req.raw.headers);
    headers.set('content-length', String(Buffer.byteLength(everything)));
    c.res = await inner(new Request(c.req.url, { method: 'POST', headers, body: everything }));
  });
}

const ONLY_WINDOW = /^sender\.recover\.window$/;

export const RECOVER_MUTANTS: readonly ServerMutant[] = [
  // It sends twice every later request of an event delivered once, at any endpoint: pending-change.ts's first attempts too, after the change,
  // and the gone endpoint's (health.gone-disables: a second attempt after the 410).
  { name: 'recover-sends-twice', defect: 'each recovered delivery is sent twice', target: 'sender', build: sendsTwice, mustFail: ['sender.recover.window'], failsOnly: /^sender\.(recover\.window|pending\.[a-z-]+|health\.gone-disables)$/ },
  { name: 'recover-ignores-window', defect: "recover ignores since and until: every delivery of the endpoint goes again", target: 'sender', build: ignoresWindow, mustFail: ['sender.recover.window'], failsOnly: ONLY_WINDOW },
];
