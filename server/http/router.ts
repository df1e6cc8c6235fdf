// Routes every operation of a contract document through the same middleware, each a small
// factory in middleware/ (in Hono's style), then the operation's handler:
//
//   checkResponse → authenticate → rateLimit → authorize → tenantCheck → testEnvironmentOnly
//   (sandbox) → jsonBody (operations with a body) → validateRequest → handler
//
// checkResponse is outermost because it looks at the answer after the handler ran.
import type { Hono, MiddlewareHandler } from 'hono';
import { compileOperation, loadOperations, type ApiName } from '../contract/operations.ts';
import type { Services } from '../domain/context.ts';
import type { Permission } from '../domain/model.ts';
import type { AppEnv } from './app-env.ts';
import type { Handler } from './handler-types.ts';
import { authenticate } from './middleware/authenticate.ts';
import { authorize } from './middleware/authorize.ts';
import { operation } from './middleware/operation.ts';
import { jsonBody } from './middleware/body.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { checkResponse } from './middleware/response-check.ts';
import { testEnvironmentOnly } from './middleware/sandbox.ts';
import { tenantCheck } from './middleware/tenant.ts';
import { validateRequest } from './middleware/validate.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface RouterOptions {
  /** Check every response against the spec; a violation becomes a 500 and is logged. */
  validateResponses: boolean;
  /** Per-credential limiter, applied after authentication. */
  rateLimiter?: RateLimiter;
}

export function registerApi(app: Hono<AppEnv>, api: ApiName, handlers: Record<string, Handler>, services: Services, opts: RouterOptions): void {
  for (const spec of loadOperations(api)) {
    const op = compileOperation(spec);
    const handler = handlers[spec.operationId];
    // Every operation of the contract is served: a missing handler is a startup error.
    if (!handler) throw new Error(`no handler for ${api}.${spec.operationId}`);

    const chain: Array<MiddlewareHandler<AppEnv>> = [
      // The operation being served, first: request metrics label by it.
      operation(spec.operationId),
      ...(opts.validateResponses ? [checkResponse(op, services.log)] : []),
      authenticate({ services, allowsMember: spec.security.some((s) => 'MemberToken' in s), environmentQuery: api === 'management' }),
      ...(opts.rateLimiter ? [rateLimit(opts.rateLimiter)] : []),
      authorize({ permission: spec.permission as Permission | null, memberRoles: spec.memberRoles }),
      tenantCheck(),
      ...(api === 'sandbox' ? [testEnvironmentOnly()] : []),
      ...(spec.requestBody ? [jsonBody()] : []),
      validateRequest(op),
    ];

    app.on(spec.method.toUpperCase(), [spec.honoPath], ...chain, async (c) => {
      const principal = c.get('principal');
      const scope = { tenantId: principal.tenantId, environmentId: principal.environmentId, environment: principal.environment };
      const reply = await handler(c.get('request'), { principal, scope, services, requestId: c.get('requestId') });
      return c.json(reply.body as object, reply.status as 200, reply.headers);
    });
  }
}
