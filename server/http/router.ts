// Routes every operation of a contract document through the same steps, each a small factory
// in middleware/, then the operation's handler:
//
//   checkResponse → operation → authenticate → rateLimit → authorize → tenantCheck →
//   testEnvironmentOnly (sandbox) → jsonBody (operations with a body) → validateRequest → handler
//
// checkResponse is a Hono middleware around the rest because it looks at the answer after the
// handler ran; the steps run one after another inside the route's one handler (step.ts).
import type { Hono, MiddlewareHandler } from 'hono';
import { compileOperation, loadOperations, type ApiName } from '../contract/operations.ts';
import type { Services } from '../domain/context.ts';
import type { Permission, Principal } from '../domain/model.ts';
import { FAULT_ANSWERS } from '../domain/write-faults.ts';
import type { AppEnv } from './app-env.ts';
import type { Handler } from './handler-types.ts';
import { authenticateStep } from './middleware/authenticate.ts';
import { authorizeStep } from './middleware/authorize.ts';
import { operationStep } from './middleware/operation.ts';
import { jsonBodyStep } from './middleware/body.ts';
import { rateLimitStep } from './middleware/rate-limit.ts';
import { checkResponse } from './middleware/response-check.ts';
import { requestDeadline } from './middleware/deadline.ts';
import { testEnvironmentOnlyStep } from './middleware/sandbox.ts';
import { runSteps, type Step } from './middleware/step.ts';
import { tenantCheckStep } from './middleware/tenant.ts';
import { validateRequestStep } from './middleware/validate.ts';
import type { RateLimiter } from './rate-limit.ts';
import { RenderedJson } from './rendered.ts';
import { StreamedReply, type EventStreamSettings } from './event-stream.ts';

export interface RouterOptions {
  /** Check every response against the spec; a violation becomes a 500 and is logged. */
  validateResponses: boolean;
  /** Per-credential limiter, applied after authentication. */
  rateLimiter?: RateLimiter;
  streams: EventStreamSettings;
  /** Every answer but the event stream's within this (middleware/deadline.ts); 0: none. */
  requestDeadlineMs?: number;
}

export function registerApi(app: Hono<AppEnv>, api: ApiName, handlers: Record<string, Handler>, services: Services, opts: RouterOptions): void {
  for (const spec of loadOperations(api)) {
    const op = compileOperation(spec);
    const handler = handlers[spec.operationId];
    // Every operation of the contract is served: a missing handler is a startup error.
    if (!handler) throw new Error(`no handler for ${api}.${spec.operationId}`);

    // A stream never ends on its own: its answer cannot be read whole to be checked.
    const streams = spec.responses.some((r) => r.contentType === 'text/event-stream');
    const around: Array<MiddlewareHandler<AppEnv>> = [
      ...(opts.requestDeadlineMs && !streams ? [requestDeadline(opts.requestDeadlineMs)] : []),
      ...(opts.validateResponses && !streams ? [checkResponse(op, services.log)] : []),
    ];
    const steps: Step[] = [
      // The operation being served, first: request metrics label by it.
      operationStep(spec.operationId),
      authenticateStep({ services, allowsMember: spec.security.some((s) => 'MemberToken' in s), environmentQuery: api === 'management' }),
      ...(opts.rateLimiter ? [rateLimitStep(opts.rateLimiter)] : []),
      authorizeStep({ permission: spec.permission as Permission | null, memberRoles: spec.memberRoles }),
      tenantCheckStep(),
      ...(api === 'sandbox' ? [testEnvironmentOnlyStep()] : []),
      ...(spec.requestBody ? [jsonBodyStep()] : []),
      validateRequestStep(op),
    ];

    // Key-authenticated writes of a test environment may carry the sandbox's armed fault.
    const faulted = WRITE_METHODS.has(spec.method.toUpperCase()) && api !== 'management' && spec.operationId !== ARMS_FAULTS;
    app.on(spec.method.toUpperCase(), [spec.honoPath], ...around, async (c) => {
      await runSteps(steps, c);
      const principal = c.get('principal');
      const scope = { tenantId: principal.tenantId, environmentId: principal.environmentId, environment: principal.environment };
      const requestId = c.get('requestId');
      // The request's store: its calls take the request's signal (middleware/deadline.ts).
      const calls = c.get('storeCalls');
      const scoped = calls ? { ...services, store: calls.wrap(services.store) } : services;
      const context = { principal, scope, services: scoped, requestId, streams: opts.streams };
      // No named closure per request: tsx (esbuild's keepNames) names each one as it is made.
      const reply = faulted ? await withWriteFault(scoped, principal, () => handler(c.get('request'), context)) : await handler(c.get('request'), context);
      return jsonResponse(reply, requestId);
    });
  }
}

const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
/** The operation that arms a fault is never faulted itself. */
const ARMS_FAULTS = 'injectSandboxWriteFault';

/**
 * Runs a write under its environment's armed sandbox fault (domain/write-faults.ts):
 * store-unavailable answers 503 before anything runs; outcome-unknown lets the write be stored
 * and answers 504 instead of its success (a refused write answers as usual and keeps the fault).
 */
async function withWriteFault<R extends { status: number }>(services: Services, principal: Principal, run: () => Promise<R>): Promise<R> {
  const faults = principal.environment === 'test' ? services.writeFaults : undefined;
  // Taken as the write starts: a second write that starts meanwhile finds nothing armed.
  const fault = faults?.take(principal.environmentId);
  if (faults === undefined || fault === undefined) return run();
  if (fault === 'store-unavailable') throw FAULT_ANSWERS[fault]();
  let reply: R;
  try {
    reply = await run();
  } catch (e) {
    faults.giveBack(principal.environmentId, fault);
    throw e;
  }
  if (reply.status >= 300) {
    faults.giveBack(principal.environmentId, fault);
    return reply;
  }
  throw FAULT_ANSWERS[fault]();
}

/**
 * The handler's answer as JSON, x-request-id included. Headers are a plain object, which
 * @hono/node-server writes straight to the socket; a header added to a finished response
 * (c.header after the handler) makes it rebuild the response around a web stream instead.
 */
function jsonResponse(reply: { status: number; body: unknown; headers?: Record<string, string> }, requestId: string): Response {
  if (reply.body instanceof StreamedReply) {
    reply.body.response.headers.set('x-request-id', requestId);
    return reply.body.response;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (reply.headers) for (const [name, value] of Object.entries(reply.headers)) headers[name.toLowerCase()] = value;
  headers['x-request-id'] = requestId;
  const text = reply.body instanceof RenderedJson ? reply.body.json : (JSON.stringify(reply.body) ?? null);
  return new Response(text, { status: reply.status, headers });
}
