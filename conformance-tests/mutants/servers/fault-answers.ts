// Mutants (issue 67): the sandbox write fault's 503 answer breaks one written rule of the
// contract's problem answers, each caught only by the generated
// `api.<operationId>.fault.store-unavailable` checks (api/write-faults.ts):
//   fault-problem-status  the problem body's `status` is 500, not the HTTP status 503;
//   outcome-problem-status the 504 outcome-unknown problem's `status` is 500;
//   fault-retry-after-0   `Retry-After: 0`, below the documented minimum of 1 second.
// And the fault's own rules, each caught only by its `api.rules.fault.*` check:
//   refused-write-takes-fault  a write refused 4xx uses the fault up (it must stay armed);
//   fault-stays-armed          a write that took the fault arms it again (it is used once).
import type { Config } from '../../../server/config.ts';
import type { Services } from '../../../server/domain/context.ts';
import { buildApp, type BuiltApp } from '../../../server/app/build-app.ts';
import type { ServerMutant } from './mutant.ts';
import { wrapApp, type Inner } from './wrap.ts';

/** Rewrites every answer of `status` with `change`. */
function onStatus(status: number, change: (body: Record<string, unknown>, headers: Headers) => void): (services: Services, config: Config) => BuiltApp {
  return (services, config) =>
    wrapApp(buildApp(services, config), () => async (c, next) => {
      await next();
      if (c.res.status !== status) return;
      const body = (await c.res.clone().json()) as Record<string, unknown>;
      const headers = new Headers(c.res.headers);
      change(body, headers);
      // Hono copies the old answer's headers onto a new one set over it: clear it first.
      c.res = undefined as unknown as Response;
      c.res = new Response(JSON.stringify(body), { status, headers });
    });
}

const FAULT_CHECKS = /^api\.[A-Za-z]+\.fault\.store-unavailable$/;
const OUTCOME_CHECKS = /^api\.[A-Za-z]+\.fault\.outcome-unknown$/;
const MUST_FAIL = ['api.createOrder.fault.store-unavailable', 'api.createPayout.fault.store-unavailable', 'api.settleSandboxPayout.fault.store-unavailable'];

export const FAULT_ANSWER_MUTANTS: readonly ServerMutant[] = [
  {
    name: 'fault-problem-status',
    defect: "the 503 store-unavailable problem's body says status 500",
    target: 'api',
    build: onStatus(503, (body) => {
      body.status = 500; // the defect
    }),
    mustFail: MUST_FAIL,
    failsOnly: FAULT_CHECKS,
  },
  {
    name: 'fault-retry-after-0',
    defect: 'the 503 store-unavailable answer carries Retry-After: 0 (the contract: an integer of at least 1)',
    target: 'api',
    build: onStatus(503, (_body, headers) => {
      headers.set('retry-after', '0'); // the defect
    }),
    mustFail: MUST_FAIL,
    failsOnly: FAULT_CHECKS,
  },
  {
    name: 'outcome-problem-status',
    defect: "the 504 outcome-unknown problem's body says status 500",
    target: 'api',
    build: onStatus(504, (body) => {
      body.status = 500; // the defect
    }),
    mustFail: ['api.createOrder.fault.outcome-unknown', 'api.createPayout.fault.outcome-unknown'],
    failsOnly: OUTCOME_CHECKS,
  },
];

const FAULT_PATH = '/sandbox/faults/next-write';

/** Arms `fault` as the caller of `req` (its credentials), through the real app. */
function armAs(inner: Inner, req: Request, fault: string): Promise<Response> {
  const headers = new Headers(req.headers);
  const body = JSON.stringify({ fault });
  headers.set('content-type', 'application/json');
  headers.set('content-length', String(Buffer.byteLength(body)));
  headers.delete('idempotency-key');
  return inner(new Request(new URL(FAULT_PATH, req.url), { method: 'POST', headers, body }));
}

const isWrite = (method: string, path: string): boolean => (method === 'POST' || method === 'PATCH') && path !== FAULT_PATH;

export const FAULT_RULE_MUTANTS: readonly ServerMutant[] = [
  {
    name: 'refused-write-takes-fault',
    defect: 'a write refused 4xx uses the armed fault up (the contract: it stays armed)',
    target: 'api',
    build: (services, config) =>
      wrapApp(buildApp(services, config), (inner) => async (c, next) => {
        await next();
        if (isWrite(c.req.method, c.req.path) && c.res.status >= 400 && c.res.status < 500) await armAs(inner, c.req.raw, 'none'); // the defect
      }),
    mustFail: ['api.rules.fault.refused-write-keeps-fault'],
    failsOnly: /^api\.rules\.fault\.refused-write-keeps-fault$/,
  },
  {
    name: 'fault-stays-armed',
    defect: 'a write that took store-unavailable arms it again (the contract: used by one write, then gone)',
    target: 'api',
    build: (services, config) =>
      wrapApp(buildApp(services, config), (inner) => async (c, next) => {
        await next();
        if (isWrite(c.req.method, c.req.path) && c.res.status === 503) await armAs(inner, c.req.raw, 'store-unavailable'); // the defect
      }),
    mustFail: ['api.rules.fault.used-once'],
    // The retry after a 503 takes the re-armed fault too: the lost-commit rehearsal's own check sees it.
    failsOnly: /^api\.rules\.(fault\.used-once|store-unavailable\.nothing-written)$/,
  },
];
